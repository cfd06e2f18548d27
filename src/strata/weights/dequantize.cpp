#include "strata/weights/dequantize.h"

#include <cstring>

#include "strata/core/error.h"
#include "strata/weights/quant_blocks.h"

// ggml's reference rounds every product and sum separately; a fused multiply-add would
// change the last bit of `d * q - m`, so contraction is off for this file.
#pragma GCC optimize("fp-contract=off")

namespace strata {

namespace {

void dequant_q4_0(const BlockQ4_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = static_cast<float>((b.qs[j] & 0x0f) - 8) * d;
    y[j + kQk / 2] = static_cast<float>((b.qs[j] >> 4) - 8) * d;
  }
}

void dequant_q4_1(const BlockQ4_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  for (int j = 0; j < kQk / 2; ++j) {
    y[j] = static_cast<float>(b.qs[j] & 0x0f) * d + m;
    y[j + kQk / 2] = static_cast<float>(b.qs[j] >> 4) * d + m;
  }
}

// Fifth bits of a Q5 block: element j's is bit j of qh, element j + 16's is bit j + 16.
template <typename Block> void unpack_q5(const Block& b, int* q) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < kQk / 2; ++j) {
    q[j] = (b.qs[j] & 0x0f) | static_cast<int>(((qh >> j) & 1u) << 4);
    q[j + kQk / 2] = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
  }
}

void dequant_q5_0(const BlockQ5_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  int q[kQk];
  unpack_q5(b, q);
  for (int j = 0; j < kQk; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
}

void dequant_q5_1(const BlockQ5_1& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float m = f16_to_f32(b.m);
  int q[kQk];
  unpack_q5(b, q);
  for (int j = 0; j < kQk; ++j) y[j] = static_cast<float>(q[j]) * d + m;
}

void dequant_q8_0(const BlockQ8_0& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int j = 0; j < kQk; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
}

// Q4_K and Q5_K share the layout of scales: per 64 elements, sub-block 2c takes the low
// nibbles (plus fifth bit 2c of qh for Q5_K) and sub-block 2c+1 the high ones.
void dequant_q4_k(const BlockQ4_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int c = 0; c < 4; ++c) {
    const uint8_t* q = b.qs + 32 * c;
    uint8_t sc, m;
    unpack_scale_min_k4(2 * c, b.scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    unpack_scale_min_k4(2 * c + 1, b.scales, &sc, &m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) y[64 * c + l] = d1 * static_cast<float>(q[l] & 0x0f) - m1;
    for (int l = 0; l < 32; ++l) y[64 * c + 32 + l] = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

void dequant_q5_k(const BlockQ5_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  const float dmin = f16_to_f32(b.dmin);
  for (int c = 0; c < 4; ++c) {
    const uint8_t* q = b.qs + 32 * c;
    const uint8_t lo_bit = static_cast<uint8_t>(1u << (2 * c));
    const uint8_t hi_bit = static_cast<uint8_t>(2u << (2 * c));
    uint8_t sc, m;
    unpack_scale_min_k4(2 * c, b.scales, &sc, &m);
    const float d1 = d * sc, m1 = dmin * m;
    unpack_scale_min_k4(2 * c + 1, b.scales, &sc, &m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) {
      const int v = (q[l] & 0x0f) + ((b.qh[l] & lo_bit) ? 16 : 0);
      y[64 * c + l] = d1 * static_cast<float>(v) - m1;
    }
    for (int l = 0; l < 32; ++l) {
      const int v = (q[l] >> 4) + ((b.qh[l] & hi_bit) ? 16 : 0);
      y[64 * c + 32 + l] = d2 * static_cast<float>(v) - m2;
    }
  }
}

// Per 128 elements: ql holds 64 bytes (low nibbles -> elements 0..63, high -> 64..127 of
// the pair of 32-byte halves) and qh 32 bytes of four 2-bit fields, one per 32-run.
void dequant_q6_k(const BlockQ6_K& b, float* y) {
  const float d = f16_to_f32(b.d);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    const int8_t* sc = b.scales + 8 * h;
    float* out = y + 128 * h;
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      out[l] = d * static_cast<float>(sc[is]) * static_cast<float>(q1);
      out[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      out[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      out[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
  }
}

void dequant_q8_k(const BlockQ8_K& b, float* y) {
  for (int j = 0; j < kQkK; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
}

void dequant_f8_b128(const BlockF8B128& b, float* y) {
  for (int j = 0; j < kFp8Block; ++j) y[j] = fp8_e4m3_to_f32(b.qs[j]) * b.d;
}

// Calls fn(block, out) for each block; blocks are read with memcpy because GGUF only
// guarantees 32-byte alignment of a tensor, not of each block (sizes like 18 or 210).
template <typename Block, typename Fn>
void for_blocks(const void* src, int64_t first, int64_t n, float* dst, int elems, Fn fn) {
  const auto* bytes = static_cast<const uint8_t*>(src) + first * static_cast<int64_t>(sizeof(Block));
  for (int64_t i = 0; i < n; ++i) {
    Block b;
    std::memcpy(&b, bytes + i * static_cast<int64_t>(sizeof(Block)), sizeof(Block));
    fn(b, dst + i * elems);
  }
}

void dequantize_plain(DType dtype, const void* src, int64_t first, int64_t n, float* dst) {
  if (dtype == DType::kF32) {
    std::memcpy(dst, static_cast<const float*>(src) + first, static_cast<size_t>(n) * 4);
    return;
  }
  const uint16_t* h = static_cast<const uint16_t*>(src) + first;
  if (dtype == DType::kF16) {
    for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32(h[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(h[i]);
  }
}

}  // namespace

bool can_dequantize(DType dtype) {
  switch (dtype) {
    case DType::kF32: case DType::kF16: case DType::kBF16: case DType::kQ4_0: case DType::kQ4_1:
    case DType::kQ5_0: case DType::kQ5_1: case DType::kQ8_0: case DType::kQ4_K: case DType::kQ5_K:
    case DType::kQ6_K: case DType::kQ8_K: case DType::kF8_E4M3: case DType::kF8_E4M3_B128:
      return true;
    default:
      return false;
  }
}

void dequantize_blocks(DType dtype, const void* src, int64_t first_block, int64_t num_blocks,
                       float* dst) {
  switch (dtype) {
    case DType::kF32: case DType::kF16: case DType::kBF16:
      return dequantize_plain(dtype, src, first_block, num_blocks, dst);
    case DType::kQ4_0: return for_blocks<BlockQ4_0>(src, first_block, num_blocks, dst, kQk, dequant_q4_0);
    case DType::kQ4_1: return for_blocks<BlockQ4_1>(src, first_block, num_blocks, dst, kQk, dequant_q4_1);
    case DType::kQ5_0: return for_blocks<BlockQ5_0>(src, first_block, num_blocks, dst, kQk, dequant_q5_0);
    case DType::kQ5_1: return for_blocks<BlockQ5_1>(src, first_block, num_blocks, dst, kQk, dequant_q5_1);
    case DType::kQ8_0: return for_blocks<BlockQ8_0>(src, first_block, num_blocks, dst, kQk, dequant_q8_0);
    case DType::kQ4_K: return for_blocks<BlockQ4_K>(src, first_block, num_blocks, dst, kQkK, dequant_q4_k);
    case DType::kQ5_K: return for_blocks<BlockQ5_K>(src, first_block, num_blocks, dst, kQkK, dequant_q5_k);
    case DType::kQ6_K: return for_blocks<BlockQ6_K>(src, first_block, num_blocks, dst, kQkK, dequant_q6_k);
    case DType::kQ8_K: return for_blocks<BlockQ8_K>(src, first_block, num_blocks, dst, kQkK, dequant_q8_k);
    case DType::kF8_E4M3:
      for (int64_t i = 0; i < num_blocks; ++i)
        dst[i] = fp8_e4m3_to_f32(static_cast<const uint8_t*>(src)[first_block + i]);
      return;
    case DType::kF8_E4M3_B128:
      return for_blocks<BlockF8B128>(src, first_block, num_blocks, dst, kFp8Block, dequant_f8_b128);
    default:
      fail("cannot dequantize dtype {} to f32", dtype_name(dtype));
  }
}

void dequantize_row(DType dtype, const void* src, float* dst, int64_t num_elems) {
  const int64_t block = dtype_block_elems(dtype);
  if (num_elems % block != 0) {
    fail("cannot dequantize {} elements of {}: not a multiple of the block size {}", num_elems,
         dtype_name(dtype), block);
  }
  dequantize_blocks(dtype, src, 0, num_elems / block, dst);
}

}  // namespace strata
