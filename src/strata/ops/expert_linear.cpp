#include "strata/ops/expert_linear.h"

#include "strata/ops/dispatch.h"
#include "strata/weights/device_layout.h"

namespace strata::ops {

namespace {
// Up to 8 tokens: at batch 8 on Qwen3-30B-A3B 800 tok/s against 637 grouped (docs/perf.md).
constexpr int64_t kCudaExpertLinearMaxTokens = 8;
// Quantized experts grouped are widened whole every step (~3x the layer's FP8 bytes), pairs
// read one expert each: pair order pays up to ~80 tokens on Qwen3-30B-A3B's FP8 shapes.
constexpr int64_t kCudaQuantizedExpertLinearMaxTokens = 64;
}

void expert_linear(const Tensor& x, const Tensor& weights, const Tensor& topk_ids, const Tensor& out,
                   const ExpertLinearOptions& options) {
  STRATA_CHECK(x.rank() == 2 && weights.rank() == 3 && topk_ids.rank() == 2 && topk_ids.dtype() == DType::kI32);
  const int64_t tokens = topk_ids.dim(0), pairs = topk_ids.numel(), in = weights.dim(2);
  STRATA_CHECK_MSG(x.dim(0) == tokens || x.dim(0) == pairs, "expert_linear: x {} for ids {}", x.shape().str(),
                   topk_ids.shape().str());
  STRATA_CHECK_MSG(x.dim(1) == (options.gated_input ? 2 * in : in), "expert_linear: x {} weights {}",
                   x.shape().str(), weights.shape().str());
  expect_shape(out, Shape{pairs, weights.dim(1)}, "expert_linear out");
  STRATA_DISPATCH(x.device(), cpu::expert_linear(x, weights, topk_ids, out, options),
                  cuda::expert_linear(x, weights, topk_ids, out, options));
}

bool expert_linear_preferred(Device device, DType weights, int64_t tokens) {
  if (device.is_cpu()) return false;
  return tokens <= (weights == DType::kBF16 ? kCudaExpertLinearMaxTokens : kCudaQuantizedExpertLinearMaxTokens);
}

bool expert_linear_supports(Device device, const Tensor& weights) {
  if (weights.dtype() == DType::kBF16 || device.is_cpu()) return true;
  const DType dtype = weights.dtype();
  const int64_t in = weights.dim(2);
  if (dtype == DType::kF8_E4M3_B128) return in % 256 == 0;
  return (dtype == DType::kQ8_0 && in % 128 == 0) || (dtype != DType::kQ8_0 && keeps_device_layout(dtype, in));
}

}  // namespace strata::ops
