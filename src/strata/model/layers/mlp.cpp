#include "strata/model/layers/mlp.h"

#include <cmath>

#include "strata/core/error.h"

#include "strata/lora/lora_set.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"

namespace strata {

void clamp_gate_up(const Tensor& gate, const Tensor& up, float limit) {
  ops::clamp(gate, -INFINITY, limit);
  ops::clamp(up, -limit, limit);
}

namespace {

MlpOptions local_columns(const MlpOptions& options, const TensorShard& shard) {
  MlpOptions local = options;
  const auto [begin, end] = shard.range(options.intermediate_size, "intermediate_size");
  local.intermediate_size = end - begin;
  return local;
}

}  // namespace

Mlp::Mlp(const MlpOptions& options, const WeightScope& w) : options_(local_columns(options, w.shard())) {
  const int64_t hidden = options.hidden_size, inter = options.intermediate_size;
  const MlpWeightNames& n = options.names;
  if (options.swiglu_limit > 0 && !n.gate_up.empty())  // the stored gate | up path does not clamp
    fail("{}: swiglu_limit needs separate gate and up projections", w.prefix());
  if (options.gated && !n.gate_up.empty()) {
    gate_up_proj_ = w.get(n.gate_up + ".weight", {2 * inter, hidden});
    if (options.bias) gate_up_bias_ = w.get(n.gate_up + ".bias", {2 * inter});
    down_proj_ = w.get(n.down + ".weight", {hidden, inter});
    if (options.bias) down_bias_ = w.get(n.down + ".bias", {hidden});
    return;
  }
  if (options.gated && !options.bias && options.swiglu_limit == 0)
    gate_up_proj_ = w.fused_rows({n.gate + ".weight", n.up + ".weight"}, {{inter, hidden}, {inter, hidden}});
  const std::string split = "intermediate_size";
  if (!gate_up_proj_.defined()) {
    if (options.gated) gate_proj_ = w.row_shard(n.gate + ".weight", {inter, hidden}, split);
    up_proj_ = w.row_shard(n.up + ".weight", {inter, hidden}, split);
  }
  down_proj_ = w.column_shard(n.down + ".weight", {hidden, inter}, split);
  if (options.bias) {
    if (options.gated) gate_bias_ = w.row_shard(n.gate + ".bias", {inter}, split);
    up_bias_ = w.row_shard(n.up + ".bias", {inter}, split);
    down_bias_ = w.get(n.down + ".bias", {hidden});
  }
}

// The fused gate | up path hands act(gate) * up and the residual add to the down projection;
// with adapters loaded, act(gate) * up is materialised for the down adapter to read.
void Mlp::forward(NormedInput& in, const Tensor& out, ForwardContext& ctx, SublayerWrite write) const {
  const int64_t t = in.rows();
  const bool accumulate = write == SublayerWrite::kAdd;
  Tensor up = ctx.temp({t, options_.intermediate_size});
  if (gate_up_proj_.defined()) {
    Tensor gate_up = ctx.temp({t, 2 * options_.intermediate_size});
    in.linear(gate_up_proj_, gate_up_bias_, gate_up);
    const Tensor& h = in.h();
    apply_lora(ctx, LoraModule::kGate, h, gate_up, 0);
    apply_lora(ctx, LoraModule::kUp, h, gate_up, options_.intermediate_size);
    if (ctx.lora == nullptr) {
      ops::linear(gate_up, down_proj_, down_bias_, out,
                  {.gated_input = options_.activation, .gated_scratch = up, .accumulate = accumulate});
      return;
    }
    ops::gated_activation_halves(gate_up, up, options_.activation);
  } else {
    const Tensor& h = in.h();
    ops::linear(h, up_proj_, up_bias_, up);
    apply_lora(ctx, LoraModule::kUp, h, up);
    if (options_.gated) {
      Tensor gate = ctx.temp({t, options_.intermediate_size});
      ops::linear(h, gate_proj_, gate_bias_, gate);
      apply_lora(ctx, LoraModule::kGate, h, gate);
      if (options_.swiglu_limit > 0) clamp_gate_up(gate, up, options_.swiglu_limit);
      ops::gated_activation(gate, up, up, options_.activation);
    } else {
      ops::activation(up, up, options_.activation);
    }
  }
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(up, down_proj_, bias_on_first_rank(down_bias_, ctx), partial);
    apply_lora(ctx, LoraModule::kDown, up, partial);  // this rank's columns' share
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(up, down_proj_, down_bias_, out, {.accumulate = accumulate});
  apply_lora(ctx, LoraModule::kDown, up, out);
}

}  // namespace strata
