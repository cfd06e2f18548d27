#include "strata/model/layers/encoder_block.h"

#include "strata/ops/elementwise.h"

namespace strata {

void EncoderBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  if (parts_.pre_norm) return forward_pre_norm(step, x, ctx);
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

void EncoderBlock::forward_pre_norm(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const Shape shape = x.shape();  // [T, hidden]
  Tensor normed = ctx.temp(shape);
  const Tensor& mixer_in = parts_.mixer_norm.defined() ? normed : x;
  if (parts_.mixer_norm.defined()) parts_.mixer_norm.apply(x, normed);
  Tensor mixed = ctx.temp(shape);
  parts_.mixer->forward(step, mixer_in, mixed, ctx);
  ops::add(x, mixed);
  parts_.ffn_norm.apply(x, normed);
  parts_.ffn->forward(normed, x, ctx, FfnWrite::kAdd);
}

}  // namespace strata
