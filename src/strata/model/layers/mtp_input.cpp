#include "strata/model/layers/mtp_input.h"

#include "strata/core/error.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"

namespace strata {

void MtpInput::apply(const Tensor& hidden, const Tensor& x, ForwardContext& ctx) const {
  const int64_t t = x.dim(0), width = x.dim(1);
  STRATA_CHECK(hidden.defined() && hidden.dim(0) == t && hidden.dim(1) == width && hidden.dtype() == x.dtype());
  if (t == 0) return;
  Tensor normed_embedding = ctx.temp({t, width}), normed_hidden = ctx.temp({t, width});
  embedding_norm.apply(x, normed_embedding);
  hidden_norm.apply(hidden, normed_hidden);
  Tensor joined = ctx.temp({t, 2 * width});  // [T, 2 hidden]: embedding | hidden
  ops::join_halves(normed_embedding, normed_hidden, joined);
  ops::linear(joined, fc, Tensor(), x);
  ctx.workspace.reset();
}

}  // namespace strata
