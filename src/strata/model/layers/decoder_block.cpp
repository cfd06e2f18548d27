#include "strata/model/layers/decoder_block.h"

#include "strata/model/layers/normed_input.h"
#include "strata/ops/elementwise.h"

namespace strata {

LayerCaps DecoderBlock::caps() const {
  LayerCaps caps = parts_.mixer ? parts_.mixer->caps() : LayerCaps{.tensor_parallel = true};
  caps.tensor_parallel = caps.tensor_parallel && (!parts_.ffn || parts_.ffn->tensor_parallel());
  return caps;
}

// Without post-sublayer norms each sublayer takes x with its norm (the first projection may
// normalise) and adds its output into x in its last linear's epilogue.
void DecoderBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  Tensor h = ctx.temp(x.shape());
  NormedInput ffn_in(x, parts_.pre_ffn_norm, h);
  if (parts_.mixer) {
    NormedInput mixer_in(x, parts_.input_norm, h);
    if (!parts_.post_mixer_norm.defined()) {
      parts_.mixer->forward(step, mixer_in, x, ctx, SublayerWrite::kAdd);
    } else {
      Tensor out = ctx.temp(x.shape());
      parts_.mixer->forward(step, mixer_in, out, ctx, SublayerWrite::kStore);
      parts_.post_mixer_norm.apply(out, out);
      if (!parts_.ffn) return ops::add(x, out);
      parts_.pre_ffn_norm.add_apply(x, out, h);  // x += out; h = norm(x)
      ffn_in = NormedInput::normalized(h);
    }
  }
  if (!parts_.ffn) return;
  if (!parts_.post_ffn_norm.defined()) return parts_.ffn->forward(ffn_in, x, ctx, SublayerWrite::kAdd);
  Tensor out = ctx.temp(x.shape());
  parts_.ffn->forward(ffn_in, out, ctx, SublayerWrite::kStore);
  parts_.post_ffn_norm.apply(out, out);
  ops::add(x, out);
}

}  // namespace strata
