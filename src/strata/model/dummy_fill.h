// Made-up weight values for `--load-format dummy`: element i of a tensor is a pure function
// of (seed, tensor name, i), computed with one fused multiply-add and rounded to nearest,
// so the host and the GPU produce bit-identical bf16 values and can be compared.
#pragma once

#include <cstdint>
#include <string>

#include "strata/core/dtype.h"

#if defined(__CUDACC__)
#define STRATA_HOST_DEVICE __host__ __device__
#else
#define STRATA_HOST_DEVICE
#endif

namespace strata {

struct DummyFill {
  uint64_t seed = 0;    // from the load seed and the tensor name
  float scale = 1.0f;   // values lie in [offset - scale, offset + scale)
  float offset = 0.0f;
};

// Norm weights near 1, everything else uniform with the variance of a default init.
DummyFill dummy_fill_for(const std::string& name, int rank, int64_t last_dim, uint64_t seed);

STRATA_HOST_DEVICE inline uint64_t dummy_mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Exact in f32 up to the single rounding of the fused multiply-add.
STRATA_HOST_DEVICE inline float dummy_value(const DummyFill& fill, int64_t i) {
  const uint64_t h = dummy_mix(fill.seed ^ dummy_mix(static_cast<uint64_t>(i)));
  const int32_t k = static_cast<int32_t>(h >> 40);  // 24 random bits
  const float w = static_cast<float>(2 * k - (1 << 24)) * (1.0f / 16777216.0f);  // [-1, 1)
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(fill.scale, w, fill.offset);
#else
  return __builtin_fmaf(fill.scale, w, fill.offset);
#endif
}

// Values first .. first + n - 1 of `fill` into host memory of `dtype` (f32, bf16 or f16).
void fill_dummy_host(const DummyFill& fill, DType dtype, int64_t n, void* dst, int64_t first = 0);

namespace cuda {
// n bf16 values of `fill` into device memory, on the current stream.
void fill_dummy_bf16(const DummyFill& fill, int64_t n, void* dst);
}  // namespace cuda

}  // namespace strata
