#include "strata/kv_events/msgpack_writer.h"

#include <bit>
#include <limits>

namespace strata {

void MsgpackWriter::nil() { put(0xc0); }

void MsgpackWriter::boolean(bool value) { put(value ? 0xc3 : 0xc2); }

void MsgpackWriter::integer(int64_t value) {
  if (value >= 0) return unsigned_integer(static_cast<uint64_t>(value));
  if (value >= -32) return put(static_cast<uint8_t>(value));  // negative fixint
  if (value >= std::numeric_limits<int8_t>::min()) {
    put(0xd0);
    return put_big_endian(static_cast<uint64_t>(value), 1);
  }
  if (value >= std::numeric_limits<int16_t>::min()) {
    put(0xd1);
    return put_big_endian(static_cast<uint64_t>(value), 2);
  }
  if (value >= std::numeric_limits<int32_t>::min()) {
    put(0xd2);
    return put_big_endian(static_cast<uint64_t>(value), 4);
  }
  put(0xd3);
  put_big_endian(static_cast<uint64_t>(value), 8);
}

void MsgpackWriter::unsigned_integer(uint64_t value) {
  if (value < 0x80) return put(static_cast<uint8_t>(value));  // positive fixint
  if (value <= 0xff) {
    put(0xcc);
    return put_big_endian(value, 1);
  }
  if (value <= 0xffff) {
    put(0xcd);
    return put_big_endian(value, 2);
  }
  if (value <= 0xffffffff) {
    put(0xce);
    return put_big_endian(value, 4);
  }
  put(0xcf);
  put_big_endian(value, 8);
}

void MsgpackWriter::float64(double value) {
  put(0xcb);
  put_big_endian(std::bit_cast<uint64_t>(value), 8);
}

void MsgpackWriter::str(std::string_view value) {
  sized_header(static_cast<uint32_t>(value.size()), 0xa0, 31, 0xd9, 0xda, 0xdb);
  out_.append(value);
}

void MsgpackWriter::bin(std::span<const uint8_t> value) {
  sized_header(static_cast<uint32_t>(value.size()), /*fix_tag=*/0, 0, 0xc4, 0xc5, 0xc6);  // bin has no fix form
  out_.append(reinterpret_cast<const char*>(value.data()), value.size());
}

void MsgpackWriter::array_header(uint32_t num_items) { sized_header(num_items, 0x90, 15, 0, 0xdc, 0xdd); }

void MsgpackWriter::map_header(uint32_t num_pairs) { sized_header(num_pairs, 0x80, 15, 0, 0xde, 0xdf); }

void MsgpackWriter::put_big_endian(uint64_t value, int num_bytes) {
  for (int i = num_bytes - 1; i >= 0; --i) put(static_cast<uint8_t>(value >> (8 * i)));
}

// A zero tag is a form the type lacks: bin has no fix form, arrays and maps no 8-bit length.
void MsgpackWriter::sized_header(uint32_t size, uint8_t fix_tag, uint32_t fix_max, uint8_t tag8, uint8_t tag16,
                                 uint8_t tag32) {
  if (fix_tag != 0 && size <= fix_max) return put(static_cast<uint8_t>(fix_tag | size));
  if (tag8 != 0 && size <= 0xff) {
    put(tag8);
    return put_big_endian(size, 1);
  }
  if (size <= 0xffff) {
    put(tag16);
    return put_big_endian(size, 2);
  }
  put(tag32);
  put_big_endian(size, 4);
}

}  // namespace strata
