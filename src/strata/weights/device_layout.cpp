#include "strata/weights/device_layout.h"

#include <cstring>
#include <type_traits>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/weights/quant_blocks.h"

namespace strata {
namespace {

// Block is BlockF8B128 or BlockQ8_0: kValues codes `qs` and a scale `d` of the remaining bytes.
template <typename Block, int kValues, bool kToDevice>
void convert_rows(const void* src, int64_t rows, int64_t k, void* dst) {
  constexpr int64_t kScaleBytes = static_cast<int64_t>(sizeof(Block)) - kValues;
  const int64_t blocks = k / kValues, row_bytes = blocks * static_cast<int64_t>(sizeof(Block));
  parallel_for(rows, 256, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const char* in = static_cast<const char*>(src) + r * row_bytes;
      char* out = static_cast<char*>(dst) + r * row_bytes;
      for (int64_t b = 0; b < blocks; ++b) {
        if constexpr (kToDevice) {
          const Block& block = reinterpret_cast<const Block*>(in)[b];
          std::memcpy(out + b * kValues, block.qs, kValues);
          std::memcpy(out + k + b * kScaleBytes, &block.d, kScaleBytes);
        } else {
          Block& block = reinterpret_cast<Block*>(out)[b];
          std::memcpy(block.qs, in + b * kValues, kValues);
          std::memcpy(&block.d, in + k + b * kScaleBytes, kScaleBytes);
        }
      }
    }
  });
}

// k-quant rows on the device: each 128-value unit's codes lane by lane (lane t of the GEMV's
// quad owns values 4t..4t+3 of each 16-value step: 16 bytes of low nibbles, word w holding steps
// 2w and 2w + 1), then the row's scales. Codes move one value at a time through these accessors.

// Where unit-local value v (0..127) keeps its low nibble in the unit's first 64 bytes.
struct NibbleAt {
  int byte, shift;
};
NibbleAt device_nibble(int v) {
  const int step = v / 16, lane = (v % 16) / 4;
  return {16 * lane + 4 * (step / 2) + v % 4, 4 * (step % 2)};
}

uint8_t get_bits(const uint8_t* bytes, int at, int shift, int mask) { return (bytes[at] >> shift) & mask; }
void set_bits(uint8_t* bytes, int at, int shift, int mask, uint8_t value) {
  bytes[at] = static_cast<uint8_t>((bytes[at] & ~(mask << shift)) | ((value & mask) << shift));
}

// Q4_K / Q5_K: value e of a block has its low four bits in qs[32 (e / 64) + e % 32], the high
// nibble for e % 64 >= 32; Q5_K its fifth at bit 2 (e / 64) + (e % 64 >= 32) of qh[e % 32].
// Device row: k / 2 low-nibble bytes (64 a unit); Q5_K then k / 8 fifth-bit bytes (16 a unit:
// lane t's 4 bytes, bit 8 i + step for its value i of the step); then each block's 16-byte
// header (d, dmin, scales).
constexpr int64_t kQ4kHeader = 16;

template <typename Block>
uint8_t q4k_host_code(const Block& block, int e) {
  uint8_t code = get_bits(block.qs, 32 * (e / 64) + e % 32, e % 64 >= 32 ? 4 : 0, 15);
  if constexpr (std::is_same_v<Block, BlockQ5_K>)
    code |= static_cast<uint8_t>(get_bits(block.qh, e % 32, 2 * (e / 64) + (e % 64 >= 32), 1) << 4);
  return code;
}
template <typename Block>
void set_q4k_host_code(Block& block, int e, uint8_t code) {
  set_bits(block.qs, 32 * (e / 64) + e % 32, e % 64 >= 32 ? 4 : 0, 15, code & 15);
  if constexpr (std::is_same_v<Block, BlockQ5_K>)
    set_bits(block.qh, e % 32, 2 * (e / 64) + (e % 64 >= 32), 1, code >> 4);
}
NibbleAt q5k_device_fifth_bit(int v) {
  const int step = v / 16, lane = (v % 16) / 4;
  return {4 * lane + v % 4, step};
}

// The code of column c of a device row (four bits, or five with the fifth bits after the nibbles).
uint8_t device_code(const uint8_t* device, int64_t k, int64_t c, bool five) {
  const int64_t u = c / 128;
  const NibbleAt at = device_nibble(static_cast<int>(c % 128)), bit = q5k_device_fifth_bit(static_cast<int>(c % 128));
  uint8_t code = get_bits(device + 64 * u, at.byte, at.shift, 15);
  if (five) code |= static_cast<uint8_t>(get_bits(device + k / 2 + 16 * u, bit.byte, bit.shift, 1) << 4);
  return code;
}
void set_device_code(uint8_t* device, int64_t k, int64_t c, bool five, uint8_t code) {
  const int64_t u = c / 128;
  const NibbleAt at = device_nibble(static_cast<int>(c % 128)), bit = q5k_device_fifth_bit(static_cast<int>(c % 128));
  set_bits(device + 64 * u, at.byte, at.shift, 15, code & 15);
  if (five) set_bits(device + k / 2 + 16 * u, bit.byte, bit.shift, 1, code >> 4);
}

template <typename Block, bool kToDevice>
void convert_q4k_row(const uint8_t* src, int64_t k, uint8_t* dst) {
  constexpr bool kFive = std::is_same_v<Block, BlockQ5_K>;
  auto* host = reinterpret_cast<Block*>(const_cast<uint8_t*>(kToDevice ? src : dst));
  uint8_t* device = const_cast<uint8_t*>(kToDevice ? dst : src);
  const int64_t headers = k / 2 + (kFive ? k / 8 : 0);
  for (int64_t b = 0; b < k / kQkK; ++b) {
    uint8_t* header = device + headers + kQ4kHeader * b;
    if constexpr (kToDevice) std::memcpy(header, &host[b], kQ4kHeader);
    else std::memcpy(&host[b], header, kQ4kHeader);
    for (int e = 0; e < kQkK; ++e) {
      if constexpr (kToDevice) set_device_code(device, k, kQkK * b + e, kFive, q4k_host_code(host[b], e));
      else set_q4k_host_code(host[b], e, device_code(device, k, kQkK * b + e, kFive));
    }
  }
}

// Q6_K: value e of a block (n = e / 128, r = e % 128, i = r / 32, l = r % 32) has its low four
// bits at bit 4 (i / 2) of ql[64n + l + 32 (i % 2)] and its high two at bit 2i of qh[32n + l].
// Device row: 96 code bytes a unit (64 of low nibbles, then 32 of high bits: lane t's 8 bytes,
// word w holding steps 4w..4w + 3 at bits 2 (step % 4)), then all int8 scales, then the f16 ds.
uint8_t q6k_host_code(const BlockQ6_K& block, int e) {
  const int r = e % 128, i = r / 32, l = r % 32, n = e / 128;
  return static_cast<uint8_t>(get_bits(block.ql, 64 * n + l + 32 * (i % 2), 4 * (i / 2), 15) |
                              (get_bits(block.qh, 32 * n + l, 2 * i, 3) << 4));
}
void set_q6k_host_code(BlockQ6_K& block, int e, uint8_t code) {
  const int r = e % 128, i = r / 32, l = r % 32, n = e / 128;
  set_bits(block.ql, 64 * n + l + 32 * (i % 2), 4 * (i / 2), 15, code & 15);
  set_bits(block.qh, 32 * n + l, 2 * i, 3, code >> 4);
}
NibbleAt q6k_device_high_bits(int v) {
  const int step = v / 16, lane = (v % 16) / 4;
  return {64 + 8 * lane + 4 * (step / 4) + v % 4, 2 * (step % 4)};
}

template <bool kToDevice>
void convert_q6k_row(const uint8_t* src, int64_t k, uint8_t* dst) {
  auto* host = reinterpret_cast<BlockQ6_K*>(const_cast<uint8_t*>(kToDevice ? src : dst));
  uint8_t* device = const_cast<uint8_t*>(kToDevice ? dst : src);
  const int64_t blocks = k / kQkK;
  uint8_t* scales = device + k * 3 / 4;  // [blocks][16] int8
  uint8_t* ds = scales + 16 * blocks;    // [blocks] f16
  for (int64_t b = 0; b < blocks; ++b) {
    if constexpr (kToDevice) {
      std::memcpy(scales + 16 * b, host[b].scales, 16);
      std::memcpy(ds + 2 * b, &host[b].d, 2);
    } else {
      std::memcpy(host[b].scales, scales + 16 * b, 16);
      std::memcpy(&host[b].d, ds + 2 * b, 2);
    }
    for (int e = 0; e < kQkK; ++e) {
      uint8_t* unit = device + 96 * (2 * b + e / 128);
      const NibbleAt low = device_nibble(e % 128), high = q6k_device_high_bits(e % 128);
      if constexpr (kToDevice) {
        const uint8_t code = q6k_host_code(host[b], e);
        set_bits(unit, low.byte, low.shift, 15, code & 15);
        set_bits(unit, high.byte, high.shift, 3, code >> 4);
      } else {
        set_q6k_host_code(host[b], e, static_cast<uint8_t>(get_bits(unit, low.byte, low.shift, 15) |
                                                           (get_bits(unit, high.byte, high.shift, 3) << 4)));
      }
    }
  }
}

// Q4_0, Q4_1, Q5_0, Q5_1 (32-value blocks): value j of a block has its low four bits in qs[j % 16]
// (the high nibble for j >= 16) and the Q5 types its fifth at bit j of qh. Device row: the nibbles
// and fifth bits where Q4_K / Q5_K keep them, then each block's d and (the _1 types) m.
template <typename Block>
constexpr bool kLegacyFive = std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>;
template <typename Block>
constexpr int64_t kLegacyHeader = std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1> ? 4 : 2;

template <typename Block>
uint8_t legacy_host_code(const Block& block, int j) {
  uint8_t code = get_bits(block.qs, j % 16, j >= 16 ? 4 : 0, 15);
  if constexpr (kLegacyFive<Block>) code |= static_cast<uint8_t>(get_bits(block.qh, j / 8, j % 8, 1) << 4);
  return code;
}
template <typename Block>
void set_legacy_host_code(Block& block, int j, uint8_t code) {
  set_bits(block.qs, j % 16, j >= 16 ? 4 : 0, 15, code & 15);
  if constexpr (kLegacyFive<Block>) set_bits(block.qh, j / 8, j % 8, 1, code >> 4);
}

template <typename Block, bool kToDevice>
void convert_legacy_row(const uint8_t* src, int64_t k, uint8_t* dst) {
  constexpr bool kFive = kLegacyFive<Block>;
  auto* host = reinterpret_cast<Block*>(const_cast<uint8_t*>(kToDevice ? src : dst));
  uint8_t* device = const_cast<uint8_t*>(kToDevice ? dst : src);
  uint8_t* headers = device + k / 2 + (kFive ? k / 8 : 0);
  for (int64_t b = 0; b < k / kQk; ++b) {
    if constexpr (kToDevice) std::memcpy(headers + kLegacyHeader<Block> * b, &host[b], kLegacyHeader<Block>);
    else std::memcpy(&host[b], headers + kLegacyHeader<Block> * b, kLegacyHeader<Block>);
    for (int j = 0; j < kQk; ++j) {
      if constexpr (kToDevice) set_device_code(device, k, kQk * b + j, kFive, legacy_host_code(host[b], j));
      else set_legacy_host_code(host[b], j, device_code(device, k, kQk * b + j, kFive));
    }
  }
}

// Rows of k-quant or (k a multiple of 256) legacy blocks.
template <typename Block, bool kToDevice>
void convert_nibble_rows(const void* src, int64_t rows, int64_t k, void* dst) {
  constexpr int64_t kValues = std::is_same_v<Block, BlockQ4_K> || std::is_same_v<Block, BlockQ5_K> ||
                                      std::is_same_v<Block, BlockQ6_K> ? kQkK : kQk;
  STRATA_CHECK_MSG(k % kQkK == 0, "the device layout of 32-value blocks needs rows of a multiple of 256, not {}", k);
  const int64_t row_bytes = k / kValues * static_cast<int64_t>(sizeof(Block));
  parallel_for(rows, 64, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const auto* in = static_cast<const uint8_t*>(src) + r * row_bytes;
      auto* out = static_cast<uint8_t*>(dst) + r * row_bytes;
      if constexpr (std::is_same_v<Block, BlockQ6_K>) convert_q6k_row<kToDevice>(in, k, out);
      else if constexpr (kValues == kQk) convert_legacy_row<Block, kToDevice>(in, k, out);
      else convert_q4k_row<Block, kToDevice>(in, k, out);
    }
  });
}

template <bool kToDevice>
void convert(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  switch (dtype) {
    case DType::kF8_E4M3_B128: return convert_rows<BlockF8B128, kFp8Block, kToDevice>(src, rows, k, dst);
    case DType::kQ8_0: return convert_rows<BlockQ8_0, kQk, kToDevice>(src, rows, k, dst);
    case DType::kQ4_K: return convert_nibble_rows<BlockQ4_K, kToDevice>(src, rows, k, dst);
    case DType::kQ5_K: return convert_nibble_rows<BlockQ5_K, kToDevice>(src, rows, k, dst);
    case DType::kQ6_K: return convert_nibble_rows<BlockQ6_K, kToDevice>(src, rows, k, dst);
    case DType::kQ4_0: return convert_nibble_rows<BlockQ4_0, kToDevice>(src, rows, k, dst);
    case DType::kQ4_1: return convert_nibble_rows<BlockQ4_1, kToDevice>(src, rows, k, dst);
    case DType::kQ5_0: return convert_nibble_rows<BlockQ5_0, kToDevice>(src, rows, k, dst);
    case DType::kQ5_1: return convert_nibble_rows<BlockQ5_1, kToDevice>(src, rows, k, dst);
    default: break;
  }
  STRATA_CHECK_MSG(false, "no device layout for {}", dtype_name(dtype));
}

}  // namespace

bool has_device_layout(DType dtype) {
  switch (dtype) {
    case DType::kF8_E4M3_B128: case DType::kQ8_0: case DType::kQ4_K: case DType::kQ5_K: case DType::kQ6_K:
    case DType::kQ4_0: case DType::kQ4_1: case DType::kQ5_0: case DType::kQ5_1: return true;
    default: return false;
  }
}

bool keeps_device_layout(DType dtype, int64_t k) {
  if (dtype == DType::kQ4_K || dtype == DType::kQ5_K || dtype == DType::kQ4_0 || dtype == DType::kQ4_1 ||
      dtype == DType::kQ5_0 || dtype == DType::kQ5_1)
    return k % kQkK == 0;  // the legacy types go by the k-quants' 256-value units
  if (dtype == DType::kQ6_K) return k % (8 * kQkK) == 0;
  return has_device_layout(dtype);
}

void to_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  convert<true>(dtype, src, rows, k, dst);
}

void from_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  convert<false>(dtype, src, rows, k, dst);
}

}  // namespace strata
