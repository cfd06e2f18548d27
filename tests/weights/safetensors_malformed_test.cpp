#include <gtest/gtest.h>

#include <random>

#include "strata/weights/safetensors.h"
#include "strata/weights/safetensors_writer.h"
#include "weights_test_util.h"

namespace strata {
namespace {

using test::expect_error;

// Writes a file whose header is `header` followed by `num_data_bytes` bytes; returns its path.
std::string write_raw(const std::string& header, size_t num_data_bytes) {
  const std::string path = test::test_dir() + "/bad.safetensors";
  test::write_bytes(path, test::raw_safetensors(header, num_data_bytes));
  return path;
}

void expect_open_error(const std::string& header, size_t num_data_bytes,
                       std::initializer_list<std::string_view> parts) {
  const std::string path = write_raw(header, num_data_bytes);
  expect_error([&] { SafetensorsFile file(path); }, parts);
  expect_error([&] { SafetensorsFile file(path); }, {path});
}

TEST(SafetensorsMalformed, TruncatedFixtureNamesFileAndTensor) {
  const std::string bytes = test::read_bytes(test::fixture_path("hf/qwen3/model.safetensors"));
  ASSERT_EQ(bytes.size(), 1021664u);
  const size_t data_begin = 8 + 3672;  // header length of this fixture
  const std::string path = test::test_dir() + "/model.safetensors";
  struct Cut {
    size_t size;
    std::vector<std::string_view> parts;
  };
  const std::vector<Cut> cuts = {
      {0, {"0 bytes", "too short"}},
      {5, {"5 bytes", "too short"}},
      {8, {"header length 3672", "truncated"}},
      {1000, {"header length 3672", "size 1000", "truncated"}},
      {data_begin - 1, {"header length 3672", "truncated"}},
      {data_begin, {"'model.embed_tokens.weight'", "past the end", "truncated"}},
      {data_begin + 131072, {"'model.layers.0.input_layernorm.weight'", "truncated"}},
      {data_begin + 500000, {"'model.layers.1.mlp.gate_proj.weight'", "truncated"}},
      {bytes.size() - 1, {"'model.norm.weight'", "[1017728, 1017984]", "download it again"}},
  };
  for (const Cut& cut : cuts) {
    SCOPED_TRACE(cut.size);
    test::write_bytes(path, std::string_view(bytes).substr(0, cut.size));
    try {
      SafetensorsFile file(path);
      ADD_FAILURE() << "opened a file cut at " << cut.size;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      for (std::string_view part : cut.parts)
        EXPECT_NE(message.find(part), std::string::npos) << part << " / " << message;
    }
  }
}

TEST(SafetensorsMalformed, HeaderLength) {
  const std::string dir = test::test_dir();
  test::write_bytes(dir + "/long.safetensors", test::raw_safetensors("{}", 0, 4096));
  expect_error([&] { SafetensorsFile f(dir + "/long.safetensors"); },
               {"long.safetensors", "header length 4096", "size 10", "truncated"});
  test::write_bytes(dir + "/huge.safetensors", test::raw_safetensors("{}", 0, ~0ull));
  expect_error([&] { SafetensorsFile f(dir + "/huge.safetensors"); },
               {"huge.safetensors", "18446744073709551615", "100000000-byte limit"});
  test::write_bytes(dir + "/empty_header.safetensors", test::raw_safetensors("", 0));
  expect_error([&] { SafetensorsFile f(dir + "/empty_header.safetensors"); },
               {"empty_header.safetensors", "not valid JSON"});
}

TEST(SafetensorsMalformed, HeaderJson) {
  expect_open_error(R"({"a": {"dtype": "F32", )", 0, {"not valid JSON"});
  expect_open_error("[1, 2]", 0, {"array, not an object"});
  expect_open_error("\"text\"", 0, {"string, not an object"});
  expect_open_error("{\"\xff\": 1}", 0, {"not valid JSON"});
  expect_open_error(R"({"a": 1})", 0, {"'a'", "not an object"});
  expect_open_error(R"({"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                    R"("x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                    8, {"'x'", "twice"});
  expect_open_error(R"({"__metadata__": {"format": 3}})", 0, {"__metadata__", "'format'"});
  expect_open_error(R"({"__metadata__": ["pt"]})", 0, {"__metadata__", "not a map"});
}

TEST(SafetensorsMalformed, UnsupportedDTypesAreNamed) {
  for (const char* dtype : {"F64", "F8_E5M2", "U16", "C64"}) {
    expect_open_error(fmt::format(R"({{"lm_head.weight":{{"dtype":"{}","shape":[2],)"
                                  R"("data_offsets":[0,2]}}}})",
                                  dtype),
                      2, {"'lm_head.weight'", dtype, "F32, F16, BF16, I32, I64, I8, U8, BOOL, F8_E4M3"});
  }
  expect_open_error(R"({"t":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", 4, {"'t'", "dtype 7"});
}

TEST(SafetensorsMalformed, Shapes) {
  expect_open_error(R"({"t":{"dtype":"U8","shape":[1,1,1,1,1,2],"data_offsets":[0,2]}})", 2,
                    {"'t'", "rank 6", "[1,1,1,1,1,2]"});
  expect_open_error(R"({"t":{"dtype":"U8","shape":[-2],"data_offsets":[0,2]}})", 2,
                    {"'t'", "non-negative integers"});
  expect_open_error(R"({"t":{"dtype":"U8","shape":[2.0],"data_offsets":[0,2]}})", 2,
                    {"'t'", "non-negative integers"});
  expect_open_error(R"({"t":{"dtype":"U8","shape":"2","data_offsets":[0,2]}})", 2,
                    {"'t'", "not a list"});
  expect_open_error(R"({"t":{"dtype":"U8","shape":[9223372036854775808],"data_offsets":[0,2]}})",
                    2, {"'t'", "non-negative integers"});
  expect_open_error(
      R"({"t":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,4]}})", 4,
      {"'t'", "more than 2^64"});
}

TEST(SafetensorsMalformed, Offsets) {
  expect_open_error(R"({"t":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24,
                    {"'t'", "[0, 20] (20 bytes)", "[2, 3] of F32 needs 24 bytes"});
  expect_open_error(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8,
                    {"'t'", "begin after end"});
  expect_open_error(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", 4,
                    {"'t'", "not [begin, end]"});
  expect_open_error(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4,
                    {"'t'", "not [begin, end]"});
  expect_open_error(R"({"t":{"dtype":"F32","shape":[1],"data_offsets":[16,20]}})", 8,
                    {"'t'", "[16, 20] past the end", "data section 8 bytes"});
  expect_open_error(R"({"t":{"dtype":"F32","shape":[1]}})", 4, {"'t'", "no 'data_offsets'"});
  expect_open_error(R"({"t":{"shape":[1],"data_offsets":[0,4]}})", 4, {"'t'", "no 'dtype'"});
}

TEST(SafetensorsMalformed, OverlapsNameBothTensors) {
  expect_open_error(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
                    20, {"'a'", "'b'", "overlap"});
  // b lies inside a, c after both: the overlap with the earlier, longer range is found.
  expect_open_error(R"({"a":{"dtype":"U8","shape":[10],"data_offsets":[0,10]},)"
                    R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},)"
                    R"("c":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})",
                    10, {"'a'", "'b'", "overlap"});
  // Empty tensors overlap nothing; holes are allowed.
  const std::string path = write_raw(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                     R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[2,2]},)"
                                     R"("c":{"dtype":"U8","shape":[2],"data_offsets":[6,8]}})",
                                     8);
  const SafetensorsFile file(path);
  EXPECT_EQ(file.tensors().size(), 3u);
  EXPECT_EQ(static_cast<const uint8_t*>(file.find("c")->data)[0], static_cast<uint8_t>(6 * 7 + 1));
}

TEST(SafetensorsMalformed, NotAFile) {
  const std::string dir = test::test_dir();
  expect_error([&] { SafetensorsFile f(dir + "/absent.safetensors"); },
               {"cannot open", "absent.safetensors"});
  expect_error([&] { SafetensorsFile f(dir); }, {dir, "not a regular file"});
}

// Every prefix and many random byte changes of a small valid file: each either opens or
// throws Error; none crashes or reads out of bounds (run under ASan to see the latter).
TEST(SafetensorsMalformed, MutationsNeverCrash) {
  const std::string dir = test::test_dir();
  write_safetensors(dir + "/good.safetensors",
                    {{"a", test::random_f32({3, 2}, 1)}, {"b", test::random_bf16({5}, 2)}},
                    {{"format", "pt"}});
  const std::string good = test::read_bytes(dir + "/good.safetensors");
  const std::string path = dir + "/mutant.safetensors";
  int num_opened = 0;
  auto try_open = [&](const std::string& bytes) {
    test::write_bytes(path, bytes);
    try {
      const SafetensorsFile file(path);
      ++num_opened;
    } catch (const Error&) {
    }
  };
  for (size_t size = 0; size < good.size(); ++size) try_open(good.substr(0, size));
  EXPECT_EQ(num_opened, 0);  // every strict prefix cuts the header or the last tensor
  std::mt19937 rng(7);
  for (int i = 0; i < 800; ++i) {
    std::string bytes = good;
    const int num_changes = 1 + static_cast<int>(rng() % 3);
    for (int c = 0; c < num_changes; ++c) {
      const size_t at = rng() % (i % 2 ? bytes.size() : 8 + 96);  // half aim at the header
      bytes[std::min(at, bytes.size() - 1)] = static_cast<char>(rng());
    }
    try_open(bytes);
  }
  EXPECT_GT(num_opened, 0);  // changes to tensor bytes leave the file valid
}

}  // namespace
}  // namespace strata
