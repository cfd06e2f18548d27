#include "strata/ops/expert_combine.h"

#include "strata/ops/dispatch.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/moe.h"

namespace strata::ops {

void expert_linear_combine(const ExpertCombineArgs& args) {
  const int64_t tokens = args.topk_ids.dim(0), pairs = args.topk_ids.numel(), n = args.weights.dim(1);
  STRATA_CHECK(args.x.rank() == 2 && args.x.dim(0) == pairs && args.weights.rank() == 3);
  expect_shape(args.topk_weights, args.topk_ids.shape(), "expert_linear_combine topk_weights");
  expect_shape(args.out, Shape{tokens, n}, "expert_linear_combine out");
  expect_shape(args.scratch, Shape{pairs, n}, "expert_linear_combine scratch");
  auto apart = [&] {
    expert_linear(args.x, args.weights, args.topk_ids, args.scratch, {.gated_input = args.gated_input});
    moe_combine(args.scratch, Tensor(), args.topk_weights, args.out, {.accumulate = args.accumulate});
  };
  STRATA_DISPATCH(args.x.device(), apart(), cuda::expert_linear_combine(args));
}

}  // namespace strata::ops
