#include "strata/model/layers/mamba2_mixer.h"

#include "strata/core/error.h"
#include "strata/model/layers/gated_norm_over_ranks.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/model/layers/shard_rows.h"
#include "strata/model/layers/ssm_segments.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_rms_norm.h"
#include "strata/ops/linear.h"
#include "strata/ops/ssd_scan.h"

namespace strata {
namespace {

// A rank's heads and B/C groups in the whole layer, [begin, end) each.
struct HeadsAndGroups {
  int64_t head_begin = 0;
  int64_t head_end = 0;
  int64_t group_begin = 0;
  int64_t group_end = 0;
};

// Groups split with their heads; with fewer groups than ranks each rank keeps the one group its
// heads read (vLLM replicates such groups too).
HeadsAndGroups rank_part(const Mamba2MixerOptions& o, const TensorShard& shard) {
  const auto [head_begin, head_end] = shard.range(o.num_heads, "the Mamba-2 heads (num_heads)");
  if (o.n_groups % shard.size == 0) {
    const auto [group_begin, group_end] = shard.range(o.n_groups, "n_groups");
    return {head_begin, head_end, group_begin, group_end};
  }
  if (shard.size % o.n_groups != 0)
    fail("--tensor-parallel-size {} neither divides n_groups ({}) nor is a multiple of it; choose a size "
         "that is", shard.size, o.n_groups);
  const int64_t group = head_begin / (o.num_heads / o.n_groups);
  return {head_begin, head_end, group, group + 1};
}

int64_t whole_inner(const Mamba2MixerOptions& o) { return o.num_heads * o.head_dim; }
int64_t whole_conv_dim(const Mamba2MixerOptions& o) { return whole_inner(o) + 2 * o.n_groups * o.state_size; }

// The part's conv channels x | B | C, in the layer's order, plus `offset` (in_proj's rows of them).
std::vector<int64_t> xbc_channels(const Mamba2MixerOptions& o, const HeadsAndGroups& p, int64_t offset) {
  const int64_t inner = whole_inner(o), ds = o.state_size;
  std::vector<int64_t> rows = index_range(p.head_begin * o.head_dim, p.head_end * o.head_dim, offset);
  append_rows(rows, index_range(p.group_begin * ds, p.group_end * ds, offset + inner));
  append_rows(rows, index_range(p.group_begin * ds, p.group_end * ds, offset + inner + o.n_groups * ds));
  return rows;
}

// in_proj's rows of the part: z | x B C | dt.
std::vector<int64_t> in_proj_rows(const Mamba2MixerOptions& o, const HeadsAndGroups& p) {
  const int64_t inner = whole_inner(o);
  std::vector<int64_t> rows = index_range(p.head_begin * o.head_dim, p.head_end * o.head_dim);
  append_rows(rows, xbc_channels(o, p, inner));
  append_rows(rows, index_range(p.head_begin, p.head_end, inner + whole_conv_dim(o)));
  return rows;
}

}  // namespace

Mamba2Mixer::Mamba2Mixer(const Mamba2MixerOptions& options, const WeightScope& w) : options_(options) {
  ops::check_ssd_scan_supported(w.device(), options.head_dim, options.state_size, w.prefix());
  ops::check_causal_conv1d_supported(w.device(), options.conv_kernel, w.prefix());
  const HeadsAndGroups part = rank_part(options, w.shard());
  options_.num_heads = part.head_end - part.head_begin;
  options_.n_groups = part.group_end - part.group_begin;
  options_.norm_group_size = options.norm_group_size > 0 ? options.norm_group_size : whole_inner(options);
  norm_spans_ranks_ = inner() % options_.norm_group_size != 0;
  load_projections(options, w);
  load_ssm_parameters(options, w);
}

void Mamba2Mixer::load_projections(const Mamba2MixerOptions& whole, const WeightScope& w) {
  const int64_t hidden = whole.hidden_size;
  const int64_t proj = whole_inner(whole) + whole_conv_dim(whole) + whole.num_heads;
  const std::vector<int64_t> rows = in_proj_rows(whole, rank_part(whole, w.shard()));
  // A checkpoint with the optional extra MLP rows of in_proj (d_mlp > 0) fails this shape check.
  const Tensor in_proj = w.rows("in_proj.weight", {proj, hidden}, rows);
  z_proj_ = in_proj.slice_rows(0, inner());
  xbc_proj_ = in_proj.slice_rows(inner(), inner() + conv_dim());
  dt_proj_ = in_proj.slice_rows(inner() + conv_dim(), inner() + conv_dim() + options_.num_heads);
  if (whole.proj_bias) {
    const Tensor bias = w.rows("in_proj.bias", {proj}, rows);
    z_bias_ = bias.slice_rows(0, inner());
    xbc_bias_ = bias.slice_rows(inner(), inner() + conv_dim());
    dt_bias_proj_ = bias.slice_rows(inner() + conv_dim(), inner() + conv_dim() + options_.num_heads);
    out_bias_ = w.get("out_proj.bias", {hidden});
  }
  out_proj_ = w.column_shard("out_proj.weight", {hidden, whole_inner(whole)}, "num_heads * head_dim");
}

void Mamba2Mixer::load_ssm_parameters(const Mamba2MixerOptions& whole, const WeightScope& w) {
  const HeadsAndGroups part = rank_part(whole, w.shard());
  const std::vector<int64_t> channels = xbc_channels(whole, part, 0);
  conv_weight_ = w.rows_f32("conv1d.weight", {whole_conv_dim(whole), 1, whole.conv_kernel}, channels)
                     .reshape({conv_dim(), whole.conv_kernel});
  if (whole.conv_bias) conv_bias_ = w.rows_f32("conv1d.bias", {whole_conv_dim(whole)}, channels);
  const std::vector<int64_t> heads = index_range(part.head_begin, part.head_end);
  dt_bias_ = w.rows_f32("dt_bias", {whole.num_heads}, heads);
  A_log_ = w.rows_f32("A_log", {whole.num_heads}, heads);
  D_ = w.rows_f32("D", {whole.num_heads}, heads);
  const int64_t hd = whole.head_dim;
  const std::vector<int64_t> columns = index_range(part.head_begin * hd, part.head_end * hd);
  norm_weight_ = norm_spans_ranks_ ? w.get_f32("norm.weight", {whole_inner(whole)})
                                   : w.rows_f32("norm.weight", {whole_inner(whole)}, columns);
}

LayerCaps Mamba2Mixer::caps() const {
  return {.ssm_h_state_elems = options_.num_heads * options_.head_dim * options_.state_size,
          .ssm_conv_state_elems = conv_dim() * (options_.conv_kernel - 1),
          .graph_safe = true,  // for plain decode steps: the runner checks the step
          .tensor_parallel = true};
}

// y <- norm_per_group(y * silu(z)) * w, over the whole layer's groups.
void Mamba2Mixer::gated_norm(const Tensor& y, const Tensor& z, ForwardContext& ctx) const {
  const ops::GatedRmsNormOptions options{.eps = options_.norm_eps, .group_size = options_.norm_group_size,
                                         .order = ops::GateOrder::kGateThenNorm};
  if (!norm_spans_ranks_) return ops::gated_rms_norm(y, z, norm_weight_, y, options);
  STRATA_CHECK_MSG(ctx.tensor_parallel != nullptr, "a split Mamba-2 layer runs without its ranks");
  gated_norm_over_ranks(y, z, norm_weight_, options, ctx);
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
  gated_norm(flat, z, ctx);
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(flat, out_proj_, bias_on_first_rank(out_bias_, ctx), partial);
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(flat, out_proj_, out_bias_, out, {.accumulate = write == SublayerWrite::kAdd});
}

}  // namespace strata
