// MessagePack encoding of what the KV-event batches hold: nil, booleans, integers in their
// shortest form (as msgspec and msgpack-python write them), float64, strings, bytes, and the
// headers of arrays and maps. Appends to one byte string.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace strata {

class MsgpackWriter {
 public:
  void nil();
  void boolean(bool value);
  void integer(int64_t value);
  void unsigned_integer(uint64_t value);
  void float64(double value);
  void str(std::string_view value);
  void bin(std::span<const uint8_t> value);
  void array_header(uint32_t num_items);
  void map_header(uint32_t num_pairs);

  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void put(uint8_t byte) { out_.push_back(static_cast<char>(byte)); }
  void put_big_endian(uint64_t value, int num_bytes);
  // A str, bin, array or map header: the fix form when it fits, else an 8-, 16- or 32-bit length.
  void sized_header(uint32_t size, uint8_t fix_tag, uint32_t fix_max, uint8_t tag8, uint8_t tag16, uint8_t tag32);

  std::string out_;
};

}  // namespace strata
