// MsgpackWriter's bytes for known values, checked against msgpack-python's packb.
#include "strata/kv_events/msgpack_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>

#include "kv_events/hex_bytes.h"

namespace strata {
namespace {

using test::hex;

std::string written(const std::function<void(MsgpackWriter&)>& write) {
  MsgpackWriter w;
  write(w);
  return hex(w.bytes());
}

TEST(MsgpackWriter, IntegersTakeTheirShortestForm) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, "00"}, {127, "7f"}, {128, "cc80"}, {255, "ccff"}, {256, "cd0100"}, {65535, "cdffff"},
      {65536, "ce00010000"}, {4294967295, "ceffffffff"}, {4294967296, "cf0000000100000000"},
      {-1, "ff"}, {-32, "e0"}, {-33, "d0df"}, {-128, "d080"}, {-129, "d1ff7f"}, {-32768, "d18000"},
      {-32769, "d2ffff7fff"}, {-2147483648, "d280000000"}, {-2147483649, "d3ffffffff7fffffff"},
      {INT64_MIN, "d38000000000000000"}};
  for (const auto& [value, bytes] : cases) EXPECT_EQ(written([&](MsgpackWriter& w) { w.integer(value); }), bytes) << value;
  EXPECT_EQ(written([](MsgpackWriter& w) { w.unsigned_integer(UINT64_MAX); }), "cfffffffffffffffff");
}

TEST(MsgpackWriter, NilBooleansFloatsStringsAndBytes) {
  EXPECT_EQ(written([](MsgpackWriter& w) { w.nil(); }), "c0");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.boolean(true); w.boolean(false); }), "c3c2");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.float64(1.5); }), "cb3ff8000000000000");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.str(""); }), "a0");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.str("GPU"); }), "a3475055");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.str(std::string(31, 'a')); }).substr(0, 6), "bf6161");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.str(std::string(32, 'a')); }).substr(0, 6), "d92061");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.str(std::string(256, 'a')); }).substr(0, 8), "da010061");
  const uint8_t two[] = {1, 2};
  EXPECT_EQ(written([&](MsgpackWriter& w) { w.bin(two); }), "c4020102");
}

TEST(MsgpackWriter, ArrayAndMapHeaders) {
  EXPECT_EQ(written([](MsgpackWriter& w) { w.array_header(0); }), "90");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.array_header(15); }), "9f");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.array_header(16); }), "dc0010");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.array_header(65536); }), "dd00010000");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.map_header(1); }), "81");
  EXPECT_EQ(written([](MsgpackWriter& w) { w.map_header(16); }), "de0010");
}

}  // namespace
}  // namespace strata
