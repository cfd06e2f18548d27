#include "strata/model/layers/eagle3_block.h"

#include "strata/core/error.h"
#include "strata/model/layers/normed_input.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"

namespace strata {

Tensor Eagle3Block::combined_input(const StepBatch& step, ForwardContext& ctx) const {
  const Tensor& in = step.device().input_hidden_states;  // [T, 3 * target_hidden] or [T, hidden]
  const int64_t t = step.num_tokens(), hidden = parts_.fc.dim(0);
  STRATA_CHECK(in.defined() && in.dim(0) == t && in.dtype() == ctx.activation_dtype);
  if (in.dim(1) == hidden) return in;
  STRATA_CHECK(in.dim(1) == parts_.fc.dim(1));
  Tensor g = ctx.temp({t, hidden});
  ops::linear(in, parts_.fc, Tensor(), g);
  return g;
}

void Eagle3Block::forward(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const int64_t t = x.dim(0), hidden = x.dim(1);
  if (t == 0) return;
  const Tensor g = combined_input(step, ctx);
  Tensor normed_embedding = ctx.temp({t, hidden}), normed_g = ctx.temp({t, hidden});
  parts_.input_norm.apply(x, normed_embedding);
  parts_.hidden_norm.apply(g, normed_g);
  Tensor joined = ctx.temp({t, 2 * hidden});  // [T, 2 hidden]: embedding | state
  ops::join_halves(normed_embedding, normed_g, joined);
  ops::convert(parts_.norm_before_residual ? normed_g : g, x);  // x becomes the residual stream
  NormedInput attention_in = NormedInput::normalized(joined);
  parts_.attention->forward(step, attention_in, x, ctx, SublayerWrite::kAdd);
  Tensor h = ctx.temp({t, hidden});
  NormedInput mlp_in(x, parts_.post_attention_norm, h);
  parts_.mlp->forward(mlp_in, x, ctx, SublayerWrite::kAdd);
}

}  // namespace strata
