#include "strata/ops/rope.h"

#include <cmath>
#include <numbers>

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

std::vector<double> base_inv_freq(double theta, int64_t dim) {
  std::vector<double> inv(dim / 2);
  for (int64_t i = 0; i < dim / 2; ++i)
    inv[i] = 1.0 / std::pow(theta, static_cast<double>(2 * i) / static_cast<double>(dim));
  return inv;
}

void apply_llama3(const RopeConfig& rope, std::vector<double>& inv) {
  const double old_ctx = static_cast<double>(rope.original_max_position_embeddings);
  const double low_wavelen = old_ctx / rope.low_freq_factor;
  const double high_wavelen = old_ctx / rope.high_freq_factor;
  for (double& f : inv) {
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen > low_wavelen) {
      f /= rope.factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (old_ctx / wavelen - rope.low_freq_factor) /
                            (rope.high_freq_factor - rope.low_freq_factor);
      f = (1 - smooth) * f / rope.factor + smooth * f;
    }
  }
}

// YaRN: blend interpolated and extrapolated frequencies over a linear ramp of dims.
float apply_yarn(const RopeConfig& rope, int64_t dim, int64_t max_positions, std::vector<double>& inv) {
  const double orig = rope.original_max_position_embeddings > 0
                          ? static_cast<double>(rope.original_max_position_embeddings)
                          : static_cast<double>(max_positions);
  const double base = rope.rope_theta;
  auto correction_dim = [&](double rotations) {
    return dim * std::log(orig / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
  };
  double low = correction_dim(rope.beta_fast), high = correction_dim(rope.beta_slow);
  if (rope.truncate) low = std::floor(low), high = std::ceil(high);
  low = std::max(0.0, low);
  high = std::min(static_cast<double>(dim - 1), high);
  if (low == high) high += 0.001;
  for (size_t i = 0; i < inv.size(); ++i) {
    const double ramp = std::clamp((static_cast<double>(i) - low) / (high - low), 0.0, 1.0);
    const double extrapolation_factor = 1.0 - ramp;
    const double extrapolation = inv[i];
    const double interpolation = inv[i] / rope.factor;
    inv[i] = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor;
  }
  if (rope.attention_factor) return static_cast<float>(*rope.attention_factor);
  auto mscale = [&](double m) { return rope.factor <= 1 ? 1.0 : 0.1 * m * std::log(rope.factor) + 1.0; };
  if (rope.mscale && rope.mscale_all_dim && *rope.mscale && *rope.mscale_all_dim)
    return static_cast<float>(mscale(*rope.mscale) / mscale(*rope.mscale_all_dim));
  return static_cast<float>(mscale(1.0));
}

}  // namespace

RopeTable rope_frequencies(const RopeConfig& rope, int64_t head_dim, int64_t max_position_embeddings,
                           DType buffer_dtype) {
  RopeTable table;
  table.rotary_dim = static_cast<int64_t>(static_cast<double>(head_dim) * rope.partial_rotary_factor);
  std::vector<double> inv = base_inv_freq(rope.rope_theta, table.rotary_dim);
  if (rope.rope_type == "linear") {
    for (double& f : inv) f /= rope.factor;
  } else if (rope.rope_type == "llama3") {
    apply_llama3(rope, inv);
  } else if (rope.rope_type == "yarn") {
    table.attention_scaling = apply_yarn(rope, table.rotary_dim, max_position_embeddings, inv);
  }
  for (double f : inv) {
    float v = static_cast<float>(f);
    if (buffer_dtype == DType::kBF16) v = bf16_to_f32(f32_to_bf16(v));
    if (buffer_dtype == DType::kF16) v = f16_to_f32(f32_to_f16(v));
    table.inv_freq.push_back(v);
  }
  return table;
}

void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const RopeParams& params) {
  STRATA_CHECK(q.rank() == 3 && k.rank() == 3 && q.dim(0) == k.dim(0) && q.dim(2) == k.dim(2));
  STRATA_CHECK(positions.dtype() == DType::kI32 && positions.dim(-1) == q.dim(0));
  STRATA_CHECK(positions.rank() == 1 || (positions.rank() == 2 && positions.dim(0) == 3 && params.mrope.enabled()));
  STRATA_CHECK(params.rotary_dim <= q.dim(2) && params.rotary_dim % 2 == 0);
  STRATA_CHECK(inv_freq.numel() == params.rotary_dim / 2);
  STRATA_DISPATCH(q.device(), cpu::rope(q, k, positions, inv_freq, params),
                  cuda::rope(q, k, positions, inv_freq, params));
}

}  // namespace strata::ops
