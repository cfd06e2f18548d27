// Expert products for decode-sized MoE steps: one row per (token, choice) pair in pair order
// (t * k + j), each read against its chosen expert's weights, without grouping the pairs by
// expert first. At up to 8 tokens grouping, gathering and inverting cost more launches
// than the products; the grouped path (moe.h) stays for larger steps.
#pragma once

#include <optional>

#include "strata/core/tensor.h"
#include "strata/ops/activation.h"

namespace strata::ops {

struct ExpertLinearOptions {
  // x rows are [2 * in] gate | up and the product reads act(gate) * up (the down projection).
  std::optional<Activation> gated_input;
};

// x: [T, in] (each token's row feeds its k pairs) or [T * k, in] (one row per pair), rows of
// 2 * in with gated_input; weights: [E, out, in]; topk_ids: [T, k] i32; out: [T * k, out].
void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ExpertLinearOptions& options = {});

// Whether an MoE layer on `device` with experts of dtype `weights` takes expert_linear for a
// step of `tokens` tokens.
bool expert_linear_preferred(Device device, DType weights, int64_t tokens);

// Whether expert_linear on `device` takes these expert weights [E, out, in]: bf16, FP8 with
// `in` a multiple of 256, Q8_0 with `in` a multiple of 128, Q4_K, Q5_K and Q6_K where the GPU keeps
// them (the tensor-core kernels' aligned rows) on CUDA; any on the CPU.
bool expert_linear_supports(Device device, const Tensor& weights);

}  // namespace strata::ops

namespace strata::cpu {
void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ops::ExpertLinearOptions& options);
}
namespace strata::cuda {
void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ops::ExpertLinearOptions& options);
}
