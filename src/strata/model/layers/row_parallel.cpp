#include "strata/model/layers/row_parallel.h"

#include "strata/ops/elementwise.h"
#include "strata/parallel/communicator.h"

namespace strata {

void finish_row_parallel(const Tensor& partial, const Tensor& out, SublayerWrite write, ForwardContext& ctx) {
  ctx.tensor_parallel->all_reduce_sum(partial);
  if (write == SublayerWrite::kAdd) {
    ops::add(out, partial);
  } else {
    ops::convert(partial, out);
  }
}

Tensor bias_on_first_rank(const Tensor& bias, const ForwardContext& ctx) {
  return ctx.tensor_parallel->rank() == 0 ? bias : Tensor();
}

}  // namespace strata
