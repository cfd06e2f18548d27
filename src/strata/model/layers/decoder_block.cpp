#include "strata/model/layers/decoder_block.h"

#include "strata/ops/elementwise.h"

namespace strata {

LayerCaps DecoderBlock::caps() const {
  return parts_.mixer ? parts_.mixer->caps() : LayerCaps{};
}

void DecoderBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  Tensor h = ctx.temp(x.shape());
  Tensor out = ctx.temp(x.shape());
  if (parts_.mixer) {
    parts_.input_norm.apply(x, h);
    parts_.mixer->forward(step, h, out, ctx);
    if (parts_.post_mixer_norm.defined()) parts_.post_mixer_norm.apply(out, out);
    if (parts_.ffn) {
      parts_.pre_ffn_norm.add_apply(x, out, h);  // x += out; h = norm(x)
    } else {
      ops::add(x, out);
    }
  } else {
    parts_.pre_ffn_norm.apply(x, h);
  }
  if (!parts_.ffn) return;
  if (!parts_.post_ffn_norm.defined()) return parts_.ffn->forward(h, x, ctx, FfnWrite::kAdd);
  parts_.ffn->forward(h, out, ctx, FfnWrite::kStore);
  parts_.post_ffn_norm.apply(out, out);
  ops::add(x, out);
}

}  // namespace strata
