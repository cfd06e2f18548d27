#include "strata/model/layers/gated_deltanet.h"

#include "strata/core/error.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/model/layers/shard_rows.h"
#include "strata/model/layers/ssm_segments.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/gated_rms_norm.h"
#include "strata/ops/linear.h"

namespace strata {
namespace {

// A rank's key heads [begin, end) in the whole layer; their value heads come with them.
struct KeyHeads {
  int64_t begin = 0;
  int64_t end = 0;
};

// HF packs in_proj_qkvz per key head g as [q_g (dk) | k_g (dk) | v_g (r*dv) | z_g (r*dv)] with
// r = nv / nk (fix_query_key_value_ordering). Rows regrouped as [q | k | v | z], the heads' each.
std::vector<int64_t> qkvz_rows(const GatedDeltaNetOptions& o, KeyHeads heads) {
  const int64_t r = o.num_v_heads / o.num_k_heads, dk = o.k_head_dim, vr = r * o.v_head_dim;
  const int64_t group = 2 * dk + 2 * vr;
  const int64_t offsets[4] = {0, dk, 2 * dk, 2 * dk + vr}, sizes[4] = {dk, dk, vr, vr};
  std::vector<int64_t> rows;
  for (int part = 0; part < 4; ++part)
    for (int64_t g = heads.begin; g < heads.end; ++g)
      append_rows(rows, index_range(0, sizes[part], g * group + offsets[part]));
  return rows;
}

// in_proj_ba per key head g: [b_g (r) | a_g (r)]; regrouped as [b of the v heads | a of them].
std::vector<int64_t> ba_rows(const GatedDeltaNetOptions& o, KeyHeads heads) {
  const int64_t r = o.num_v_heads / o.num_k_heads;
  std::vector<int64_t> rows;
  for (int part = 0; part < 2; ++part)
    for (int64_t g = heads.begin; g < heads.end; ++g) append_rows(rows, index_range(0, r, g * 2 * r + part * r));
  return rows;
}

// The conv channels [q | k | v] of the heads (the rows of in_proj_qkv, in the same order).
std::vector<int64_t> qkv_channel_rows(const GatedDeltaNetOptions& o, KeyHeads heads) {
  const int64_t r = o.num_v_heads / o.num_k_heads, dk = o.k_head_dim, dv = o.v_head_dim;
  const int64_t key_dim = o.num_k_heads * dk;
  std::vector<int64_t> rows = index_range(heads.begin * dk, heads.end * dk);
  append_rows(rows, index_range(heads.begin * dk, heads.end * dk, key_dim));
  append_rows(rows, index_range(heads.begin * r * dv, heads.end * r * dv, 2 * key_dim));
  return rows;
}

KeyHeads rank_key_heads(const GatedDeltaNetOptions& o, const TensorShard& shard) {
  const auto [begin, end] = shard.range(o.num_k_heads, "linear_num_key_heads");
  return {begin, end};
}

GatedDeltaNetOptions local_heads(const GatedDeltaNetOptions& o, KeyHeads heads) {
  GatedDeltaNetOptions local = o;
  local.num_k_heads = heads.end - heads.begin;
  local.num_v_heads = local.num_k_heads * (o.num_v_heads / o.num_k_heads);
  return local;
}

}  // namespace

GatedDeltaNet::GatedDeltaNet(const GatedDeltaNetOptions& options, const WeightScope& w) : options_(options) {
  const int64_t hidden = options.hidden_size, nv = options.num_v_heads;
  if (options.num_k_heads < 1 || nv % options.num_k_heads != 0)
    fail("{}: linear_num_value_heads {} must be a multiple of linear_num_key_heads {}",
         w.prefix(), nv, options.num_k_heads);
  ops::check_gated_delta_rule_supported(w.device(), options.k_head_dim, w.prefix());
  ops::check_causal_conv1d_supported(w.device(), options.conv_kernel, w.prefix());
  const KeyHeads heads = rank_key_heads(options, w.shard());
  options_ = local_heads(options, heads);
  if (options.split_projections) {
    load_split_projections(options, w);
  } else {
    load_grouped_projections(options, w);
  }
  const int64_t whole_conv_dim = 2 * options.num_k_heads * options.k_head_dim + nv * options.v_head_dim;
  const std::vector<int64_t> channels = qkv_channel_rows(options, heads);
  conv_weight_ = w.rows_f32("conv1d.weight", {whole_conv_dim, 1, options.conv_kernel}, channels)
                     .reshape({conv_dim(), options.conv_kernel});
  const int64_t r = nv / options.num_k_heads;
  A_log_ = w.rows_f32("A_log", {nv}, index_range(heads.begin * r, heads.end * r));
  dt_bias_ = w.rows_f32("dt_bias", {nv}, index_range(heads.begin * r, heads.end * r));
  norm_weight_ = w.get_f32("norm.weight", {options.v_head_dim});  // per head dim: every rank's
  out_proj_ = w.column_shard("out_proj.weight", {hidden, nv * options.v_head_dim},
                             "linear_num_value_heads * linear_value_head_dim");
}

void GatedDeltaNet::load_grouped_projections(const GatedDeltaNetOptions& whole, const WeightScope& w) {
  const int64_t hidden = whole.hidden_size, nv = options_.num_v_heads;
  const KeyHeads heads = rank_key_heads(whole, w.shard());
  const int64_t whole_qkvz = 2 * whole.num_k_heads * whole.k_head_dim + 2 * whole.num_v_heads * whole.v_head_dim;
  const Tensor qkvz = w.rows("in_proj_qkvz.weight", {whole_qkvz, hidden}, qkvz_rows(whole, heads));
  qkv_proj_ = qkvz.slice_rows(0, conv_dim());
  z_proj_ = qkvz.slice_rows(conv_dim(), conv_dim() + value_dim());
  const Tensor ba = w.rows("in_proj_ba.weight", {2 * whole.num_v_heads, hidden}, ba_rows(whole, heads));
  b_proj_ = ba.slice_rows(0, nv);
  a_proj_ = ba.slice_rows(nv, 2 * nv);
}

// Already in the order the forward reads: value head j belongs to key head j / (nv / nk).
void GatedDeltaNet::load_split_projections(const GatedDeltaNetOptions& whole, const WeightScope& w) {
  const int64_t hidden = whole.hidden_size, nv = whole.num_v_heads, dv = whole.v_head_dim;
  const KeyHeads heads = rank_key_heads(whole, w.shard());
  const int64_t v_begin = heads.begin * (nv / whole.num_k_heads), v_end = v_begin + options_.num_v_heads;
  const int64_t whole_conv_dim = 2 * whole.num_k_heads * whole.k_head_dim + nv * dv;
  qkv_proj_ = w.rows("in_proj_qkv.weight", {whole_conv_dim, hidden}, qkv_channel_rows(whole, heads));
  z_proj_ = w.row_range("in_proj_z.weight", {nv * dv, hidden}, v_begin * dv, v_end * dv);
  b_proj_ = w.row_range("in_proj_b.weight", {nv, hidden}, v_begin, v_end);
  a_proj_ = w.row_range("in_proj_a.weight", {nv, hidden}, v_begin, v_end);
}

LayerCaps GatedDeltaNet::caps() const {
  return {.ssm_h_state_elems = options_.num_v_heads * options_.k_head_dim * options_.v_head_dim,
          .ssm_conv_state_elems = conv_dim() * (options_.conv_kernel - 1),
          .graph_safe = true,  // for plain decode steps: the runner checks the step
          .tensor_parallel = true};
}

void GatedDeltaNet::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                            SublayerWrite write) const {
  const int64_t t = in.rows(), nv = options_.num_v_heads, dk = options_.k_head_dim;
  const int64_t dv = options_.v_head_dim, kernel = options_.conv_kernel;
  Tensor qkv = ctx.temp({t, conv_dim()});
  Tensor z = ctx.temp({t, nv, dv});
  Tensor b = ctx.temp({t, nv});
  Tensor a = ctx.temp({t, nv});
  in.linear(qkv_proj_, Tensor(), qkv);
  const Tensor& h = in.h();
  ops::linear(h, z_proj_, Tensor(), z.reshape({t, nv * dv}));
  ops::linear(h, b_proj_, Tensor(), b);
  ops::linear(h, a_proj_, Tensor(), a);
  Tensor core = ctx.temp({t, nv, dv});
  for_each_ssm_segment(step, ctx, [&](const SsmSegment& s) {
    const int64_t n = s.end - s.begin;
    const Tensor rows = qkv.slice_rows(s.begin, s.end);
    ops::causal_conv1d({.x = rows, .weight = conv_weight_,
                        .conv_state = s.conv_state_as({conv_dim(), kernel - 1}),
                        .out = rows,
                        .intermediate_states = s.conv_intermediates.defined()
                            ? s.conv_intermediates.reshape({n, conv_dim(), kernel - 1}) : Tensor(),
                        .state_slots = s.state_slots});
    ops::gated_delta_rule({.qkv = rows, .a = a.slice_rows(s.begin, s.end),
                           .b = b.slice_rows(s.begin, s.end), .A_log = A_log_, .dt_bias = dt_bias_,
                           .state = s.h_state_as({nv, dk, dv}),
                           .out = core.slice_rows(s.begin, s.end),
                           .intermediate_states = s.h_intermediates.defined()
                               ? s.h_intermediates.reshape({n, nv, dk, dv}) : Tensor(),
                           .state_slots = s.state_slots});
  });
  const Tensor flat = core.reshape({t * nv, dv});
  ops::gated_rms_norm(flat, z.reshape({t * nv, dv}), norm_weight_, flat,
                      {.eps = options_.norm_eps, .order = ops::GateOrder::kNormThenGate, .gate = options_.output_gate});
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(core.reshape({t, nv * dv}), out_proj_, Tensor(), partial);
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(core.reshape({t, nv * dv}), out_proj_, Tensor(), out, {.accumulate = write == SublayerWrite::kAdd});
}

}  // namespace strata
