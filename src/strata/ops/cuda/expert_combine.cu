// CUDA expert_linear_combine: the pair-order product (the warp GEMV, 2048 blocks at the 30B's
// down projection) then the combine kernel. One kernel that streamed each token's k experts and
// added them into the residual ran at 0.67-1.12 TB/s against the product's 1.9: with the pairs
// inside a block, too few loads are in flight (docs/perf.md, 2026-12-06).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/expert_combine.h"
#include "strata/ops/expert_linear.h"
#include "strata/ops/moe.h"

namespace strata::cuda {

void expert_linear_combine(const ops::ExpertCombineArgs& a) {
  if (a.topk_ids.numel() == 0) return;
  expert_linear(a.x, a.weights, a.topk_ids, a.scratch, {.gated_input = a.gated_input});
  moe_combine(a.scratch, Tensor(), a.topk_weights, a.out, {.accumulate = a.accumulate});
}

}  // namespace strata::cuda
