// The routed experts' last product and their weighted combine in one op, for decode-sized MoE
// steps in pair order: out[t] (+)= sum_j topk_weights[t, j] * (x[t * k + j] @ weights[e]^T),
// e = topk_ids[t, j]. A backend may add each pair into the token's row as it goes; CUDA puts
// the pairs' products through `scratch`, then the combine (faster there: docs/perf.md).
#pragma once

#include <optional>

#include "strata/core/tensor.h"
#include "strata/ops/activation.h"

namespace strata::ops {

struct ExpertCombineArgs {
  Tensor x;             // [T * k, in], or [T * k, 2 * in] gate | up with gated_input
  Tensor weights;       // [E, out, in]
  Tensor topk_ids;      // [T, k] i32
  Tensor topk_weights;  // [T, k] f32
  Tensor out;           // [T, out]
  Tensor scratch;       // [T * k, out]: the pairs' products where the backend cannot fuse
  std::optional<Activation> gated_input;  // the product reads act(gate) * up
  bool accumulate = false;                // out += the combine (the block's residual add)
};

void expert_linear_combine(const ExpertCombineArgs& args);

}  // namespace strata::ops

namespace strata::cuda {
void expert_linear_combine(const ops::ExpertCombineArgs& args);
}
