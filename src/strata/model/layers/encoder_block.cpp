#include "strata/model/layers/encoder_block.h"

#include "strata/ops/elementwise.h"

namespace strata {

void EncoderBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const Shape shape = x.shape();  // [T, hidden]
  Tensor mixed = ctx.temp(shape);
  parts_.mixer->forward(step, x, mixed, ctx);
  ops::add(x, mixed);
  parts_.mixer_norm.apply(x, x);
  Tensor ffn_out = ctx.temp(shape);
  parts_.ffn->forward(x, ffn_out, ctx, FfnWrite::kStore);
  ops::add(x, ffn_out);
  parts_.ffn_norm.apply(x, x);
}

}  // namespace strata
