// The CPU reference of expert_linear: each pair's row through the CPU linear with its
// expert's weights (an id outside [0, E) is a broken invariant of the router).
#include "strata/core/error.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/linear.h"

namespace strata::cpu {

void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ops::ExpertLinearOptions& options) {
  const int64_t pairs = topk_ids.numel(), experts = weights.dim(0), n = weights.dim(1), in = weights.dim(2);
  const int64_t pairs_per_x = pairs / x.dim(0);
  Tensor input = x;
  if (options.gated_input) {
    input = Tensor::host(DType::kF32, {x.dim(0), in});
    cpu::gated_activation_halves(x, input, *options.gated_input);
  }
  for (int64_t p = 0; p < pairs; ++p) {
    const int32_t e = topk_ids.data_as<int32_t>()[p];
    STRATA_CHECK_MSG(e >= 0 && e < experts, "expert_linear: expert id {} of {}", e, experts);
    const Tensor w = weights.slice_rows(e, e + 1).reshape({n, in});
    linear(input.slice_rows(p / pairs_per_x, p / pairs_per_x + 1), w, Tensor(), out.slice_rows(p, p + 1));
  }
}

}  // namespace strata::cpu
