#include "strata/model/layers/encoder_block.h"

#include "strata/model/layers/normed_input.h"
#include "strata/ops/elementwise.h"

namespace strata {

void EncoderBlock::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  if (parts_.pre_norm) return forward_pre_norm(step, x, ctx);
  const Shape shape = x.shape();  // [T, hidden]
  Tensor mixed = ctx.temp(shape);
  NormedInput mixer_in = NormedInput::normalized(x);  // post-norm blocks: norms follow the adds
  parts_.mixer->forward(step, mixer_in, mixed, ctx, SublayerWrite::kStore);
  ops::add(x, mixed);
  parts_.mixer_norm.apply(x, x);
  Tensor ffn_out = ctx.temp(shape);
  NormedInput ffn_in = NormedInput::normalized(x);
  parts_.ffn->forward(ffn_in, ffn_out, ctx, SublayerWrite::kStore);
  ops::add(x, ffn_out);
  parts_.ffn_norm.apply(x, x);
}

void EncoderBlock::forward_pre_norm(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const Shape shape = x.shape();  // [T, hidden]
  Tensor normed = ctx.temp(shape);
  if (parts_.mixer_norm.defined()) parts_.mixer_norm.apply(x, normed);
  NormedInput mixer_in = NormedInput::normalized(parts_.mixer_norm.defined() ? normed : x);  // LayerNorms
  Tensor mixed = ctx.temp(shape);
  parts_.mixer->forward(step, mixer_in, mixed, ctx, SublayerWrite::kStore);
  ops::add(x, mixed);
  parts_.ffn_norm.apply(x, normed);
  NormedInput ffn_in = NormedInput::normalized(normed);
  parts_.ffn->forward(ffn_in, x, ctx, SublayerWrite::kAdd);
}

}  // namespace strata
