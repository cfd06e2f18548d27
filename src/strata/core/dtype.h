// Element types of tensors: plain floats and ints, and quantized block types whose
// elements only exist in groups (a block of 32 or 256 values sharing scales).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace strata {

enum class DType : uint8_t {
  kF32, kF16, kBF16, kI32, kI64, kI8, kU8,
  // ggml block-quantized types, laid out exactly as ggml defines them.
  kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ4_K, kQ5_K, kQ6_K, kQ8_K,
  // FP8 e4m3fn, one byte per value, as safetensors stores it (F8_E4M3).
  kF8_E4M3,
  // FP8 weights as Strata keeps them: blocks of 128 e4m3 values along a row and their f32
  // scale (weights/fp8.h); HF block, channel and tensor scales all map onto it exactly.
  kF8_E4M3_B128,
};

std::string_view dtype_name(DType dtype);
bool is_quantized(DType dtype);
// Elements per block: 1 for plain types.
int64_t dtype_block_elems(DType dtype);
// Bytes per block: element size for plain types.
int64_t dtype_block_bytes(DType dtype);
// Bytes of `num_elems` elements; num_elems must be a multiple of the block size.
int64_t dtype_bytes(DType dtype, int64_t num_elems);

inline float bf16_to_f32(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

// Round to nearest even, as torch does.
inline uint16_t f32_to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float f16_to_f32(uint16_t v);
uint16_t f32_to_f16(float f);
// e4m3fn (no infinities; 0x7f and 0xff are NaN; largest finite 448).
float fp8_e4m3_to_f32(uint8_t v);
// Round to nearest even, saturating to +-448 as torch's cast of a clamped value does.
uint8_t f32_to_fp8_e4m3(float f);

}  // namespace strata
