// Gated RMS norms (see the header). Each row is independent; the gate and the norm are applied
// in HF's order so f32 results round the same way up to summation order.
#include "strata/ops/cpu/gated_rms_norm.h"
#include "strata/ops/gated_rms_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

float gate_value(GateActivation gate, float v) {
  return gate == GateActivation::kSigmoid ? 1.f / (1.f + std::exp(-v)) : v / (1.f + std::exp(-v));
}

float inv_rms(const float* v, int64_t n, float eps) {
  float sum_sq = 0.f;
  for (int64_t i = 0; i < n; ++i) sum_sq += v[i] * v[i];
  return 1.f / std::sqrt(sum_sq / static_cast<float>(n) + eps);
}

// weight * (x * rsqrt(mean(x^2) + eps)) * act(z), per group.
void norm_then_gate(const GatedRmsNormParams& p, int64_t group, const float* x, const float* z,
                    float* out) {
  for (int64_t g0 = 0; g0 < p.hidden_size; g0 += group) {
    const float r = inv_rms(x + g0, group, p.eps);
    for (int64_t i = g0; i < g0 + group; ++i) out[i] = (p.weight[i] * (x[i] * r)) * gate_value(p.gate, z[i]);
  }
}

// weight * (h * rsqrt(mean(h^2) + eps)) with h = x * act(z), per group.
void gate_then_norm(const GatedRmsNormParams& p, int64_t group, const float* x, const float* z,
                    float* out, float* gated) {
  for (int64_t i = 0; i < p.hidden_size; ++i) gated[i] = x[i] * gate_value(p.gate, z[i]);
  for (int64_t g0 = 0; g0 < p.hidden_size; g0 += group) {
    const float r = inv_rms(gated + g0, group, p.eps);
    for (int64_t i = g0; i < g0 + group; ++i) out[i] = p.weight[i] * (gated[i] * r);
  }
}

}  // namespace

void validate(const GatedRmsNormParams& p) {
  const int64_t group = p.group_size > 0 ? p.group_size : p.hidden_size;
  if (p.num_rows < 0 || p.hidden_size <= 0 || p.group_size < 0 || p.hidden_size % group != 0) {
    fail("gated_rms_norm: num_rows {} must be >= 0, hidden_size {} > 0 and a multiple of "
         "group_size {}", p.num_rows, p.hidden_size, p.group_size);
  }
  if (!(p.eps >= 0.f)) fail("gated_rms_norm: eps is {}; it must be >= 0", p.eps);
  if (p.num_rows > 0 &&
      (p.x == nullptr || p.z == nullptr || p.weight == nullptr || p.out == nullptr)) {
    fail("gated_rms_norm: x, z, weight and out must be set for {} rows", p.num_rows);
  }
}

void gated_rms_norm(const GatedRmsNormParams& p) {
  validate(p);
  const int64_t group = p.group_size > 0 ? p.group_size : p.hidden_size;
  const int64_t h = p.hidden_size;
  parallel_for(p.num_rows, std::max<int64_t>(1, 16384 / h), [&](int64_t begin, int64_t end) {
    std::vector<float> gated(p.order == GateOrder::kGateThenNorm ? h : 0);
    for (int64_t r = begin; r < end; ++r) {
      if (p.order == GateOrder::kNormThenGate) {
        norm_then_gate(p, group, p.x + r * h, p.z + r * h, p.out + r * h);
      } else {
        gate_then_norm(p, group, p.x + r * h, p.z + r * h, p.out + r * h, gated.data());
      }
    }
  });
}

}  // namespace strata::cpu

namespace strata::cpu {

void gated_rms_norm(const Tensor& x, const Tensor& z, const Tensor& weight, const Tensor& out,
                    const ops::GatedRmsNormOptions& options) {
  STRATA_CHECK(x.dtype() == DType::kF32 && z.dtype() == DType::kF32 && out.dtype() == DType::kF32);
  if (x.dim(0) == 0) return;
  gated_rms_norm(GatedRmsNormParams{.x = x.data_as<float>(), .z = z.data_as<float>(),
                                    .weight = weight.data_as<float>(), .out = out.data_as<float>(),
                                    .num_rows = x.dim(0), .hidden_size = x.dim(1),
                                    .group_size = options.group_size, .eps = options.eps,
                                    .order = options.order, .gate = options.gate});
}

}  // namespace strata::cpu
