#include "strata/model/layers/gated_residual.h"

#include "strata/ops/activation.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/gated_residual.h"
#include "strata/ops/linear.h"

namespace strata {

GatedResidual::GatedResidual(const GatedResidualOptions& options, const WeightScope& w, bool inject)
    : options_(options) {
  const int64_t width = options.num_streams * options.hidden_size;
  norm_ = w.get_f32("hc_norm.weight", {width});
  down_ = w.get("input_mix_weight_down.weight", {options.lowrank, width});
  up_ = w.get("input_mix_weight_up.weight", {width, options.lowrank});
  if (inject) inject_ = w.get("block_inject_weight.weight", {options.num_streams, width});
}

// Leaves normed = hc_norm(streams) [T, n * hidden] in the workspace and returns it. Linear inputs
// take the activation dtype (bf16 on a GPU); the gate logits stay f32.
Tensor GatedResidual::normed_mix(const Tensor& streams, const Tensor& mixed, ForwardContext& ctx) const {
  const int64_t t = streams.dim(0), n = options_.num_streams, hidden = options_.hidden_size;
  Tensor normed = ctx.temp(streams.shape());
  ops::stream_rms_norm(streams, norm_, hidden, {.eps = options_.rms_norm_eps, .unit_offset = true}, normed);
  Tensor low = ctx.temp({t, options_.lowrank});
  ops::linear(normed, down_, Tensor(), low);
  ops::scale(low, 1.0f / static_cast<float>(n));
  ops::activation(low, low, ops::Activation::kSilu);
  Tensor gate_logits = ctx.temp_f32(streams.shape());
  ops::linear(low, up_, Tensor(), gate_logits);
  ops::gated_stream_mean(gate_logits.reshape({t, n, hidden}), normed.reshape({t, n, hidden}), mixed);
  return normed;
}

Tensor GatedResidual::mix(const Tensor& streams, const Tensor& mixed, ForwardContext& ctx) const {
  const int64_t n = options_.num_streams;
  const Tensor normed = normed_mix(streams, mixed, ctx);
  Tensor logits = ctx.temp_f32({streams.dim(0), n});
  ops::linear(normed, inject_, Tensor(), logits);
  return logits;
}

void GatedResidual::inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) const {
  const int64_t t = streams.dim(0), n = options_.num_streams;
  ops::stream_inject(streams.reshape({t, n, options_.hidden_size}), block_out, logits);
}

void GatedResidual::collapse(const Tensor& streams, const Tensor& out, ForwardContext& ctx) const {
  normed_mix(streams, out, ctx);
}

}  // namespace strata
