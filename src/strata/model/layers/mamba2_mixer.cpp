#include "strata/model/layers/mamba2_mixer.h"

#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/ssm_segments.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_rms_norm.h"
#include "strata/ops/linear.h"
#include "strata/ops/ssd_scan.h"

namespace strata {

Mamba2Mixer::Mamba2Mixer(const Mamba2MixerOptions& options, const WeightScope& w)
    : options_(options) {
  ops::check_ssd_scan_supported(w.device(), options.head_dim, options.state_size, w.prefix());
  ops::check_causal_conv1d_supported(w.device(), options.conv_kernel, w.prefix());
  const int64_t hidden = options.hidden_size, nh = options.num_heads;
  const int64_t proj = inner() + conv_dim() + nh;
  // A checkpoint with the optional extra MLP rows of in_proj (d_mlp > 0) fails this shape check.
  const Tensor in_proj = w.get("in_proj.weight", {proj, hidden});
  z_proj_ = in_proj.slice_rows(0, inner());
  xbc_proj_ = in_proj.slice_rows(inner(), inner() + conv_dim());
  dt_proj_ = in_proj.slice_rows(inner() + conv_dim(), proj);
  if (options.proj_bias) {
    const Tensor bias = w.get("in_proj.bias", {proj});
    z_bias_ = bias.slice_rows(0, inner());
    xbc_bias_ = bias.slice_rows(inner(), inner() + conv_dim());
    dt_bias_proj_ = bias.slice_rows(inner() + conv_dim(), proj);
    out_bias_ = w.get("out_proj.bias", {hidden});
  }
  conv_weight_ = w.get_f32("conv1d.weight", {conv_dim(), 1, options.conv_kernel})
                     .reshape({conv_dim(), options.conv_kernel});
  if (options.conv_bias) conv_bias_ = w.get_f32("conv1d.bias", {conv_dim()});
  dt_bias_ = w.get_f32("dt_bias", {nh});
  A_log_ = w.get_f32("A_log", {nh});
  D_ = w.get_f32("D", {nh});
  norm_weight_ = w.get_f32("norm.weight", {inner()});
  out_proj_ = w.get("out_proj.weight", {hidden, inner()});
}

LayerCaps Mamba2Mixer::caps() const {
  return {.ssm_h_state_elems = options_.num_heads * options_.head_dim * options_.state_size,
          .ssm_conv_state_elems = conv_dim() * (options_.conv_kernel - 1),
          .graph_safe = true};  // for plain decode steps: the runner checks the step
}

void Mamba2Mixer::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                          SublayerWrite write) const {
  const int64_t t = in.rows(), nh = options_.num_heads, hd = options_.head_dim;
  const int64_t kernel = options_.conv_kernel;
  Tensor z = ctx.temp({t, inner()});
  Tensor xbc = ctx.temp({t, conv_dim()});
  Tensor dt = ctx.temp({t, nh});
  in.linear(z_proj_, z_bias_, z);
  const Tensor& h = in.h();
  ops::linear(h, xbc_proj_, xbc_bias_, xbc);
  ops::linear(h, dt_proj_, dt_bias_proj_, dt);
  Tensor y = ctx.temp({t, nh, hd});
  const ops::SsdScanOptions scan{.n_groups = options_.n_groups, .dt_min = options_.dt_min,
                                 .dt_max = options_.dt_max, .chunk_size = options_.chunk_size};
  for_each_ssm_segment(step, ctx, [&](const SsmSegment& s) {
    const int64_t n = s.end - s.begin;
    const Tensor rows = xbc.slice_rows(s.begin, s.end);
    ops::causal_conv1d({.x = rows, .weight = conv_weight_, .bias = conv_bias_,
                        .conv_state = s.conv_state_as({conv_dim(), kernel - 1}),
                        .out = rows,
                        .intermediate_states = s.conv_intermediates.defined()
                            ? s.conv_intermediates.reshape({n, conv_dim(), kernel - 1}) : Tensor(),
                        .state_slots = s.state_slots});
    ops::ssd_scan({.xbc = rows, .dt = dt.slice_rows(s.begin, s.end), .dt_bias = dt_bias_,
                   .A_log = A_log_, .D = D_,
                   .state = s.h_state_as({nh, hd, options_.state_size}),
                   .y = y.slice_rows(s.begin, s.end),
                   .intermediate_states = s.h_intermediates.defined()
                       ? s.h_intermediates.reshape({n, nh, hd, options_.state_size}) : Tensor(),
                   .state_slots = s.state_slots},
                  scan);
  });
  const Tensor flat = y.reshape({t, inner()});
  ops::gated_rms_norm(flat, z, norm_weight_, flat,
                      {.eps = options_.norm_eps, .group_size = options_.norm_group_size,
                       .order = ops::GateOrder::kGateThenNorm});
  ops::linear(flat, out_proj_, out_bias_, out, {.accumulate = write == SublayerWrite::kAdd});
}

}  // namespace strata
