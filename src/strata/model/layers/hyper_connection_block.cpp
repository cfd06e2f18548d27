#include "strata/model/layers/hyper_connection_block.h"

#include "strata/model/layers/normed_input.h"

namespace strata {

LayerCaps HyperConnectionBlock::caps() const {
  LayerCaps caps = parts_.mixer->caps();
  caps.tensor_parallel = caps.tensor_parallel && parts_.ffn->tensor_parallel();
  return caps;
}

void HyperConnectionBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const int64_t t = x.dim(0), hidden = parts_.hidden_size;
  Tensor collapsed = ctx.temp({t, hidden}), h = ctx.temp({t, hidden}), out = ctx.temp({t, hidden});
  const HyperConnection::Mix mixer_mix = parts_.mixer_hc->collapse(x, collapsed, ctx);
  NormedInput mixer_in(collapsed, parts_.mixer_norm, h);
  parts_.mixer->forward(step, mixer_in, out, ctx, SublayerWrite::kStore);
  parts_.mixer_hc->expand(x, out, mixer_mix);
  const HyperConnection::Mix ffn_mix = parts_.ffn_hc->collapse(x, collapsed, ctx);
  NormedInput ffn_in(collapsed, parts_.ffn_norm, h);
  parts_.ffn->forward(ffn_in, out, ctx, SublayerWrite::kStore);
  parts_.ffn_hc->expand(x, out, ffn_mix);
}

}  // namespace strata
