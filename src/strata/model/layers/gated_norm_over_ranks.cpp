#include "strata/model/layers/gated_norm_over_ranks.h"

#include "strata/core/error.h"
#include "strata/model/layers/closing_windows.h"
#include "strata/ops/elementwise.h"
#include "strata/parallel/communicator.h"

namespace strata {
namespace {

// all_gather_rows leaves rank q's rows at q * T; row t * N + q of the result is rank q's part of
// token t, so the result read as [T, N * L] holds whole rows.
Tensor whole_rows(const Tensor& part, const Tensor& order, ForwardContext& ctx) {
  const int64_t t = part.dim(0), l = part.dim(1), n = ctx.tensor_parallel->world_size();
  Tensor gathered = ctx.temp({n * t, l});
  ctx.tensor_parallel->all_gather_rows(part, gathered);
  Tensor whole = ctx.temp({t * n, l});
  ops::gather_rows(gathered, order, whole);
  return whole;
}

}  // namespace

void gated_norm_over_ranks(const Tensor& x, const Tensor& z, const Tensor& weight,
                           const ops::GatedRmsNormOptions& options, ForwardContext& ctx) {
  const Communicator& comm = *ctx.tensor_parallel;
  const int64_t t = x.dim(0), l = x.dim(1), n = comm.world_size();
  STRATA_CHECK(weight.numel() == n * l && z.dim(0) == t && z.dim(1) == l);
  std::vector<int32_t> order(t * n), mine(t);
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t q = 0; q < n; ++q) order[i * n + q] = static_cast<int32_t>(q * t + i);
    mine[i] = static_cast<int32_t>(i * n + comm.rank());
  }
  const Tensor order_rows = step_i32(order, {t * n}, ctx);
  const Tensor whole_x = whole_rows(x, order_rows, ctx);
  const Tensor whole_z = whole_rows(z, order_rows, ctx);
  ops::gated_rms_norm(whole_x.reshape({t, n * l}), whole_z.reshape({t, n * l}), weight,
                      whole_x.reshape({t, n * l}), options);
  ops::gather_rows(whole_x, step_i32(mine, {t}, ctx), x);
}

}  // namespace strata
