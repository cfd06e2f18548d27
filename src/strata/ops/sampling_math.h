// The arithmetic of sampling, shared verbatim by the CPU and CUDA kernels so both pick the
// same token for the same random number: an exp built from fmaf (bit-identical on both),
// integer weights (sums are exact in any order), and the order-preserving key of a float.
// Kept set: top-k by key (ties lowest id first), then the smallest prefix whose weight
// reaches ceil(top_p * weight of the top-k), then min_p on p = exp((x - max) / T); the
// draw walks kept tokens in id order until the weight sum exceeds floor(u * kept weight).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__ __forceinline__
#else
#define STRATA_HD inline
#endif

namespace strata::sampling {

// Weights are p * 2^40 truncated: p <= 1, so a vocab below 2^23 sums below 2^63.
inline constexpr float kWeightScale = 1099511627776.0f;

// exp(x) for x <= 0; 0 below -80. Written with explicit fmaf so no compiler contracts it
// differently on the host and the device.
STRATA_HD float exp_nonpositive(float x) {
  if (!(x >= -80.0f)) return 0.0f;
  const float n = rintf(x * 1.44269504088896341f);
  float r = fmaf(-n, 0.693145751953125f, x);  // ln 2 split in two for an exact reduction
  r = fmaf(-n, 1.42860682030941723212e-6f, r);
  float p = 1.0f / 5040.0f;
  p = fmaf(p, r, 1.0f / 720.0f);
  p = fmaf(p, r, 1.0f / 120.0f);
  p = fmaf(p, r, 1.0f / 24.0f);
  p = fmaf(p, r, 1.0f / 6.0f);
  p = fmaf(p, r, 0.5f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  return ldexpf(p, static_cast<int>(n));
}

// Probability relative to the row maximum (1 at the maximum) at inverse temperature inv_t.
STRATA_HD float relative_prob(float x, float max, float inv_t) { return exp_nonpositive((x - max) * inv_t); }

STRATA_HD uint64_t weight_of(float p) { return static_cast<uint64_t>(p * kWeightScale); }

// Larger key <=> larger float (+0 above -0).
STRATA_HD uint32_t key_of(float x) {
  uint32_t bits;
#if defined(__CUDA_ARCH__)
  bits = __float_as_uint(x);
#else
  std::memcpy(&bits, &x, 4);
#endif
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

STRATA_HD float penalized_logit(float raw, bool seen, int32_t output_count, float repetition,
                                float presence, float frequency) {
  float x = raw;
  if (seen && repetition != 1.0f) x = x > 0.0f ? x / repetition : x * repetition;
  if (output_count > 0) x = x - fmaf(frequency, static_cast<float>(output_count), presence);
  return x;
}

// Smallest weight the top-p prefix must reach, in [1, total].
STRATA_HD uint64_t top_p_target(float top_p, uint64_t total) {
  uint64_t t = static_cast<uint64_t>(ceil(static_cast<double>(top_p) * static_cast<double>(total)));
  if (t < 1) t = 1;
  return t > total ? total : t;
}

// The draw: the first kept token whose running weight sum exceeds this, in [0, total).
STRATA_HD uint64_t draw_target(uint32_t random_bits, uint64_t total) {
  const double u = static_cast<double>(random_bits) * (1.0 / 4294967296.0);
  uint64_t t = static_cast<uint64_t>(floor(u * static_cast<double>(total)));
  return t >= total ? total - 1 : t;
}

STRATA_HD bool is_greedy(float temperature, int32_t top_k) { return temperature <= 0.0f || top_k == 1; }

}  // namespace strata::sampling
