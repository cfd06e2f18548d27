#include "strata/model/layers/gated_residual_block.h"

#include "strata/model/layers/normed_input.h"

namespace strata {

LayerCaps GatedResidualBlock::caps() const {
  LayerCaps caps = parts_.mixer->caps();
  caps.graph_safe = false;
  if (parts_.ple) caps.carry = parts_.ple->carry();
  // The streams' mixers and the PLE carry are whole on every rank; the mixer and ffn split.
  caps.tensor_parallel = caps.tensor_parallel && parts_.ffn->tensor_parallel();
  return caps;
}

void GatedResidualBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const int64_t t = x.dim(0), hidden = parts_.hidden_size;
  if (parts_.ple) parts_.ple->add_to(step, x, ctx);
  Tensor mixed = ctx.temp({t, hidden}), out = ctx.temp({t, hidden});
  const Tensor mixer_inject = parts_.mixer_hc->mix(x, mixed, ctx);
  NormedInput mixer_in = NormedInput::normalized(mixed);
  parts_.mixer->forward(step, mixer_in, out, ctx, SublayerWrite::kStore);
  parts_.mixer_hc->inject(x, out, mixer_inject);
  const Tensor ffn_inject = parts_.ffn_hc->mix(x, mixed, ctx);
  NormedInput ffn_in = NormedInput::normalized(mixed);
  parts_.ffn->forward(ffn_in, out, ctx, SublayerWrite::kStore);
  parts_.ffn_hc->inject(x, out, ffn_inject);
}

}  // namespace strata
