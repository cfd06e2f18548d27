#include "ops/quant_blocks_support.h"

#include "ops/cuda_op_support.h"
#include "strata/core/error.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/fp8.h"
#include "strata/weights/quant_blocks.h"

namespace strata::test {
namespace {

// The f16 scale (and minimum) fields of block b, set from `scale(lowest)`: bits lowest + [0, 0x1000).
template <typename Next>
void set_scales(DType dtype, void* data, int64_t b, Next scale) {
  switch (dtype) {
    case DType::kQ4_K: {
      auto& block = static_cast<BlockQ4_K*>(data)[b];
      block.d = scale(0x0c00), block.dmin = scale(0x0c00);  // 2^-12 .. 2^-9
      return;
    }
    case DType::kQ5_K: {
      auto& block = static_cast<BlockQ5_K*>(data)[b];
      block.d = scale(0x0800), block.dmin = scale(0x0c00);  // 2^-13 .. 2^-10 (codes to 31)
      return;
    }
    case DType::kQ6_K: static_cast<BlockQ6_K*>(data)[b].d = scale(0x0400); return;  // 2^-14 .. 2^-11 (int8 scales)
    case DType::kQ8_0: static_cast<BlockQ8_0*>(data)[b].d = scale(0x1000); return;  // 2^-11 .. 2^-8
    case DType::kQ4_0: static_cast<BlockQ4_0*>(data)[b].d = scale(0x1400); return;  // 2^-10 .. 2^-7 (q - 8)
    case DType::kQ5_0: static_cast<BlockQ5_0*>(data)[b].d = scale(0x1000); return;  // (q - 16)
    case DType::kQ4_1: {
      auto& block = static_cast<BlockQ4_1*>(data)[b];
      block.d = scale(0x1400), block.m = static_cast<uint16_t>(0x8000 | scale(0x1c00));  // m: -2^-8 .. -2^-5
      return;
    }
    case DType::kQ5_1: {
      auto& block = static_cast<BlockQ5_1*>(data)[b];
      block.d = scale(0x1000), block.m = static_cast<uint16_t>(0x8000 | scale(0x1c00));
      return;
    }
    default: STRATA_CHECK_MSG(false, "random_blocks: no scales for {}", dtype_name(dtype));
  }
}

// FP8: random bytes hold NaN codes, so random values of a few hundredths quantized by the CPU.
Tensor random_fp8(Shape shape, uint64_t seed) {
  const Tensor w = random_rounded(shape, seed, -0.05f, 0.05f);
  Tensor q = Tensor::host(DType::kF8_E4M3_B128, shape);
  const int64_t k = w.dim(w.rank() - 1), row_bytes = dtype_bytes(DType::kF8_E4M3_B128, k);
  for (int64_t r = 0; r < w.numel() / k; ++r)
    quantize_row_fp8_b128(w.data_as<float>() + r * k, k, static_cast<char*>(q.data()) + r * row_bytes);
  return q;
}

}  // namespace

Tensor random_blocks(DType dtype, Shape shape, uint64_t seed) {
  if (dtype == DType::kF8_E4M3_B128) return random_fp8(shape, seed);
  Tensor q = Tensor::host(dtype, shape);
  auto* bytes = static_cast<uint8_t*>(q.data());
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (int64_t i = 0; i < q.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(next());
  const auto scale = [&](uint16_t lowest) { return static_cast<uint16_t>(lowest + next() % 0x1000); };
  for (int64_t b = 0; b < q.numel() / dtype_block_elems(dtype); ++b) set_scales(dtype, q.data(), b, scale);
  return q;
}

Tensor dequantised(const Tensor& q) {
  Tensor w = Tensor::host(DType::kF32, q.shape());
  const int64_t k = q.dim(q.rank() - 1), rows = q.numel() / k, row_bytes = dtype_bytes(q.dtype(), k);
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(q.dtype(), static_cast<const char*>(q.data()) + r * row_bytes, w.data_as<float>() + r * k, k);
  return w;
}

}  // namespace strata::test
