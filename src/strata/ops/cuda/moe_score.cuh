// The per-expert router score of the biased and table routers, computed as the CPU router
// computes it (cpu/moe_route_biased.cpp) so that both choose the same experts.
#pragma once

#include "strata/ops/moe.h"

namespace strata::cuda {

// sigmoid(logit), or sqrt(softplus(logit)) with softplus linear past 20 as torch has it.
__device__ __forceinline__ float moe_score(float logit, ops::MoeScoring scoring) {
  if (scoring == ops::MoeScoring::kSqrtSoftplus) return sqrtf(logit > 20.f ? logit : log1pf(expf(logit)));
  return 1.0f / (1.0f + expf(-logit));
}

}  // namespace strata::cuda
