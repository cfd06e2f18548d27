#include "strata/model/layers/moe.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"

namespace strata {

MoeWeightNames mixtral_moe_names() {
  return {.gate_proj = "w1", .up_proj = "w3", .down_proj = "w2"};
}

void MoeFfn::take_split(const WeightScope& w) {
  split_ = expert_split(w.shard(), options_.num_experts, options_.intermediate_size);
  dispatch_ = w.shard().dispatch_tokens && w.shard().size > 1;
  if (dispatch_ && !split_.splits_experts())
    fail("{}: --expert-dispatch all-to-all sends tokens to the ranks that hold their experts; add "
         "--enable-expert-parallel", w.prefix());
  // Packing pairs per destination rank has CPU loops only; the CUDA kernels are still to come.
  if (dispatch_ && !w.device().is_cpu())
    fail("{}: --expert-dispatch all-to-all runs on the CPU only for now; use --expert-dispatch all-reduce (the "
         "default) or --device cpu", w.prefix());
  // The CUDA grouping places other ranks' pairs last as the CPU does, but no GPU run has checked
  // the layer over a range of experts yet (tests/ops/cuda_moe_test.cpp covers the grouping).
  if (split_.splits_experts() && !w.device().is_cpu())
    fail("{}: experts split by range (--enable-expert-parallel) run on the CPU only for now; leave out "
         "--enable-expert-parallel (each rank then holds every expert's share of the intermediate columns) or use "
         "--device cpu", w.prefix());
}

std::string MoeFfn::expert_name(const WeightScope& w, int64_t e, const std::string& name) const {
  return w.name(fmt::format("experts.{}.{}.weight", e, name));
}

Tensor MoeFfn::stacked_experts(const WeightScope& w, const std::string& name, bool split_rows) const {
  const int64_t inter = options_.intermediate_size, dim = options_.expert_dim();
  const int64_t first = split_.first_expert, end = first + split_.num_local_experts;
  const Shape part = split_rows ? Shape{inter, dim} : Shape{dim, inter};
  if (!split_.splits_columns()) {
    std::vector<std::string> names;
    for (int64_t e = first; e < end; ++e) names.push_back(expert_name(w, e, name));
    return w.weights().stacked(names, part);
  }
  const std::pair<int64_t, int64_t> columns{split_.first_column, split_.first_column + split_.num_local_columns};
  std::vector<MatrixPart> parts;
  for (int64_t e = first; e < end; ++e)
    parts.push_back({.name = expert_name(w, e, name), .shape = part,
                     .rows = split_rows ? columns : std::pair<int64_t, int64_t>{0, dim},
                     .cols = split_rows ? std::pair<int64_t, int64_t>{0, dim} : columns});
  const int64_t local = split_.num_local_columns;
  return w.weights().matrix_parts(parts, split_rows ? Shape{end - first, local, dim} : Shape{end - first, dim, local});
}

// Expert e's gate rows then its up rows, [E, 2 I, H], so one grouped linear serves both;
// undefined on the CPU (its kernels take the parts), when the parts cannot be concatenated, or
// with swiglu_limit (the fused kernels do not clamp gate and up).
Tensor MoeFfn::fused_gate_up(const WeightScope& w, const MoeWeightNames& names) const {
  const ModelWeights& weights = w.weights();
  if (weights.backend().device().is_cpu() || options_.swiglu_limit > 0) return {};
  std::vector<std::string> parts;
  for (int64_t e = split_.first_expert; e < split_.first_expert + split_.num_local_experts; ++e) {
    parts.push_back(expert_name(w, e, names.gate_proj));
    parts.push_back(expert_name(w, e, names.up_proj));
  }
  if (!weights.can_concat(parts)) return {};
  const int64_t inter = split_.num_local_columns, dim = options_.expert_dim(), experts = split_.num_local_experts;
  if (!split_.splits_columns()) return weights.stacked(parts, {inter, dim}).reshape({experts, 2 * inter, dim});
  std::vector<MatrixPart> slices;  // each part's rows of this rank: gate | up stay apart
  for (const std::string& name : parts)
    slices.push_back({.name = name, .shape = {options_.intermediate_size, dim},
                      .rows = {split_.first_column, split_.first_column + inter}, .cols = {0, dim}});
  return weights.matrix_parts(slices, {experts, 2 * inter, dim});
}

MoeExpertWeights MoeFfn::load_experts(const WeightScope& w, const MoeWeightNames& names) const {
  MoeExpertWeights experts;
  if (options_.gated) experts.gate_up = fused_gate_up(w, names);
  if (options_.gated && !experts.gate_up.defined()) experts.gate = stacked_experts(w, names.gate_proj, true);
  if (!experts.gate_up.defined()) experts.up = stacked_experts(w, names.up_proj, true);
  const std::string down = expert_name(w, split_.first_expert, names.down_proj);
  check_whole_blocks(split_, w.weights().stored_dtype(down, {options_.expert_dim(), options_.intermediate_size}), down);
  experts.down = stacked_experts(w, names.down_proj, false);
  return experts;
}

// [hash_vocab_size, top_k] i32 on the weights' device, every entry checked to be an expert
// here since the CUDA router cannot refuse one mid-step.
Tensor MoeFfn::load_tid2eid(const WeightScope& w, const MoeWeightNames& names) const {
  const std::string name = w.name(names.tid2eid);
  const Tensor table = w.weights().get_i32_table(name, {options_.hash_vocab_size, options_.route.top_k});
  for (int64_t i = 0; i < table.numel(); ++i) {
    const int32_t e = table.data_as<int32_t>()[i];
    if (e < 0 || e >= options_.num_experts)
      fail("{}: expert {} at {} is not one of the {} experts", name, e, i, options_.num_experts);
  }
  return w.device().is_cpu() ? table : w.weights().backend().from_host(table);
}

void MoeFfn::load_shared_parts(const WeightScope& w, const MoeWeightNames& names) {
  const MoeOptions& o = options_;
  router_ = w.get(names.router, {o.num_experts, o.hidden_size});
  if (o.router_bias) router_bias_ = w.get_f32(names.router_bias, {o.num_experts}).reshape({1, o.num_experts});
  if (o.correction_bias) correction_bias_ = w.get_f32(names.correction_bias, {o.num_experts});
  if (o.hash_vocab_size > 0) tid2eid_ = load_tid2eid(w, names);
  if (o.latent_size > 0) {
    latent_in_ = w.get(names.latent_in + ".weight", {o.latent_size, o.hidden_size});
    latent_out_ = w.get(names.latent_out + ".weight", {o.hidden_size, o.latent_size});
    if (o.latent_bias) {
      latent_in_bias_ = w.get(names.latent_in + ".bias", {o.latent_size});
      latent_out_bias_ = w.get(names.latent_out + ".bias", {o.hidden_size});
      // Enters the sum over ranks once; under dispatch each rank projects only its own tokens.
      if (w.shard().rank > 0 && !dispatch_) latent_out_bias_ = Tensor();
    }
  }
  if (o.shared_intermediate_size > 0) {
    shared_expert_ = std::make_unique<Mlp>(
        MlpOptions{.hidden_size = o.hidden_size, .intermediate_size = o.shared_intermediate_size,
                   .activation = o.activation, .gated = o.gated, .swiglu_limit = o.swiglu_limit,
                   .names = names.shared_expert_mlp},
        w.scope(names.shared_expert));
    if (o.shared_expert_gate) shared_gate_ = w.get(names.shared_expert_gate, {1, o.hidden_size});
  }
}

MoeFfn::MoeFfn(const MoeOptions& options, const WeightScope& w, const MoeWeightNames& names)
    : options_(options) {
  take_split(w);
  check_supported(w);
  experts_ = load_experts(w, names);
  load_shared_parts(w, names);
  pair_order_capable_ = takes_pair_order();
}

MoeFfn::MoeFfn(const MoeOptions& options, MoeExpertWeights experts, const WeightScope& w,
               const MoeWeightNames& names)
    : options_(options), experts_(std::move(experts)) {
  take_split(w);
  check_supported(w);
  STRATA_CHECK_MSG(experts_.down.dim(0) == split_.num_local_experts && experts_.down.dim(2) == split_.num_local_columns,
                   "experts {} given for this rank's {} of {} columns", experts_.down.shape().str(),
                   split_.num_local_experts, split_.num_local_columns);
  if (split_.splits_columns() && w.shard().rank > 0) experts_.down_bias = Tensor();  // enters the sum once
  STRATA_CHECK_MSG(!experts_.gate_up_bias.defined() || experts_.gate_up.defined(),
                   "expert gate/up biases need the fused gate_up weights");
  STRATA_CHECK_MSG(options_.swiglu_limit == 0 || !experts_.gate_up.defined(),
                   "swiglu_limit needs separate gate and up experts (the fused path does not clamp)");
  load_shared_parts(w, names);
  pair_order_capable_ = takes_pair_order();
}

// expert_linear takes fused gate | up experts without biases or a clamp, in a dtype its kernels read.
bool MoeFfn::takes_pair_order() const {
  // Pair order reads every routed expert: a rank holding some of them groups instead.
  return !split_.splits_experts() && experts_.gate_up.defined() && options_.swiglu_limit == 0 &&
         !experts_.gate_up_bias.defined() && !experts_.down_bias.defined() &&
         ops::expert_linear_supports(experts_.gate_up.device(), experts_.gate_up) &&
         ops::expert_linear_supports(experts_.down.device(), experts_.down);
}

void MoeFfn::check_supported(const WeightScope& w) const {
  const MoeOptions& o = options_;
  if (o.route.top_k < 1 || o.route.top_k > o.num_experts)
    fail("{}: num_experts_per_tok {} must be between 1 and the {} experts", w.prefix(), o.route.top_k,
         o.num_experts);
  ops::check_experts_supported(w.device(), o.num_experts, o.expert_dim(), split_.num_local_columns, w.prefix());
}

// ys[i] = expert(xs[i]) for the rows of each expert. xs: [pairs, dim]; ys: [pairs, dim].
void MoeFfn::run_experts(const Tensor& xs, const Tensor& expert_offsets, const Tensor& ys, ForwardContext& ctx) const {
  const int64_t pairs = xs.dim(0), inter = split_.num_local_columns;
  Tensor up = ctx.temp({pairs, inter});
  if (experts_.gate_up.defined()) {
    Tensor gate_up = ctx.temp({pairs, 2 * inter});
    ops::grouped_linear(xs, experts_.gate_up, expert_offsets, gate_up);
    if (experts_.gate_up_bias.defined()) ops::add_grouped_bias(gate_up, experts_.gate_up_bias, expert_offsets);
    ops::gated_activation_halves(gate_up, up, options_.activation);
  } else if (options_.gated) {
    ops::grouped_linear(xs, experts_.up, expert_offsets, up);
    Tensor gate = ctx.temp({pairs, inter});
    ops::grouped_linear(xs, experts_.gate, expert_offsets, gate);
    if (options_.swiglu_limit > 0) clamp_gate_up(gate, up, options_.swiglu_limit);
    ops::gated_activation(gate, up, up, options_.activation);
  } else {
    ops::grouped_linear(xs, experts_.up, expert_offsets, up);
    ops::activation(up, up, options_.activation);
  }
  ops::grouped_linear(up, experts_.down, expert_offsets, ys);
  if (experts_.down_bias.defined()) ops::add_grouped_bias(ys, experts_.down_bias, expert_offsets);
}

// ys[i] = expert(x[token of sorted pair i]) for the pairs of topk_ids ([T, k] i32) grouped by this
// rank's experts; returns sorted_pairs [T * k] i32. x: [T, dim]; ys: [T * k, dim].
Tensor MoeFfn::run_grouped(const Tensor& x, const Tensor& topk_ids, const Tensor& ys, ForwardContext& ctx) const {
  const int64_t pairs = topk_ids.numel();
  const ops::MoeGroups groups{.sorted_pairs = ctx.workspace.alloc(DType::kI32, {pairs}),
                              .token_rows = ctx.workspace.alloc(DType::kI32, {pairs}),
                              .expert_offsets = ctx.workspace.alloc(DType::kI32, {split_.num_local_experts + 1}),
                              .first_expert = split_.first_expert};
  ops::moe_group(topk_ids, groups);
  Tensor xs = ctx.temp({pairs, x.dim(1)});
  ops::gather_rows(x, groups.token_rows, xs);
  // Other ranks' experts' pairs come last and no grouped linear writes their rows: zeros add nothing.
  if (split_.splits_experts()) ctx.backend.fill_bytes(ys, 0);
  run_experts(xs, groups.expert_offsets, ys, ctx);
  return groups.sorted_pairs;
}

// Router logits to each token's k experts and weights. topk_ids: [T, k] i32; topk_weights: [T, k] f32.
void MoeFfn::route(NormedInput& in, const Tensor& topk_ids, const Tensor& topk_weights, ForwardContext& ctx) const {
  Tensor logits = ctx.temp_f32({in.rows(), options_.num_experts});
  in.linear(router_, Tensor(), logits);
  if (router_bias_.defined()) ops::add_grouped_bias(logits, router_bias_, Tensor());
  if (tid2eid_.defined()) {
    ops::moe_route_by_table(logits, ctx.token_ids, tid2eid_, topk_ids, topk_weights, options_.route);
  } else if (correction_bias_.defined()) {
    ops::moe_route_biased(logits, correction_bias_, topk_ids, topk_weights, options_.route);
  } else {
    ops::moe_route(logits, topk_ids, topk_weights, options_.route);
  }
}

// Decode-sized steps: each (token, choice) pair against its expert in pair order, no grouping.
// x: [T, dim]; ys: [T * k, dim].
void MoeFfn::run_experts_in_pair_order(const Tensor& x, const Tensor& topk_ids, const Tensor& ys,
                                       ForwardContext& ctx) const {
  Tensor gate_up = ctx.temp({topk_ids.numel(), 2 * split_.num_local_columns});
  ops::expert_linear(x, experts_.gate_up, topk_ids, gate_up);
  ops::expert_linear(gate_up, experts_.down, topk_ids, ys, {.gated_input = options_.activation});
}

void MoeFfn::forward(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const {
  if (ctx.tensor_parallel == nullptr) return forward_local(in, out, ctx, write);
  if (dispatch_) return forward_dispatch(in, out, ctx, write);
  // The shared expert's columns add into the local experts' partial sum: one all-reduce a layer.
  ForwardContext local = ctx;
  local.tensor_parallel = nullptr;
  Tensor partial = ctx.temp({in.rows(), options_.hidden_size});
  forward_local(in, partial, local, SublayerWrite::kStore);
  finish_row_parallel(partial, out, write, ctx);
}

// out = (or +=, with kAdd) the routed experts' combine, then the shared expert's output.
void MoeFfn::forward_local(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const {
  const int64_t t = in.rows(), k = options_.route.top_k, pairs = t * k, dim = options_.expert_dim();
  Tensor topk_ids = ctx.workspace.alloc(DType::kI32, {t, k});
  Tensor topk_weights = ctx.temp_f32({t, k});
  route(in, topk_ids, topk_weights, ctx);
  const Tensor& h = in.h();
  Tensor x = h;
  if (latent_in_.defined()) {
    x = ctx.temp({t, dim});
    ops::linear(h, latent_in_, latent_in_bias_, x);
  }
  Tensor ys = ctx.temp({pairs, dim});
  Tensor sorted_pairs;  // undefined: ys in pair order
  const bool add = write == SublayerWrite::kAdd;
  const bool pair_order = pair_order_capable_ && ops::expert_linear_preferred(h.device(), experts_.gate_up.dtype(), t);
  if (pair_order) {
    run_experts_in_pair_order(x, topk_ids, ys, ctx);
  } else {
    sorted_pairs = run_grouped(x, topk_ids, ys, ctx);
  }
  combine(ys, sorted_pairs, topk_weights, out, add, ctx);
  add_shared_expert(h, out, ctx);
}

// ys: [T * k, dim] (sorted_pairs: their pairs, or undefined: pair order); topk_weights: [T, k]; out: [T, hidden].
void MoeFfn::combine(const Tensor& ys, const Tensor& sorted_pairs, const Tensor& topk_weights, const Tensor& out,
                     bool add, ForwardContext& ctx) const {
  if (!latent_out_.defined()) return ops::moe_combine(ys, sorted_pairs, topk_weights, out, {.accumulate = add});
  Tensor combined = ctx.temp({topk_weights.dim(0), options_.expert_dim()});
  ops::moe_combine(ys, sorted_pairs, topk_weights, combined);
  ops::linear(combined, latent_out_, latent_out_bias_, out, {.accumulate = add});
}

// out += the shared expert's output (gated where the model has a shared gate).
void MoeFfn::add_shared_expert(const Tensor& h, const Tensor& out, ForwardContext& ctx) const {
  if (!shared_expert_) return;
  const int64_t t = h.dim(0);
  NormedInput shared_in = NormedInput::normalized(h);
  if (!shared_gate_.defined()) return shared_expert_->forward(shared_in, out, ctx, SublayerWrite::kAdd);
  Tensor shared = ctx.temp(out.shape());
  shared_expert_->forward(shared_in, shared, ctx, SublayerWrite::kStore);
  Tensor gate = ctx.temp_f32({t, 1});
  ops::linear(h, shared_gate_, Tensor(), gate);
  ops::add_sigmoid_gated(out, shared, gate);
}

}  // namespace strata
