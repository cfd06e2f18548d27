#include "strata/ops/causal_conv1d.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void check_causal_conv1d_supported(Device device, int64_t kernel_size, const std::string& layer) {
  if (kernel_size < 2) fail("{}: conv kernel size {} is not supported; it must be at least 2", layer, kernel_size);
  if (!device.is_cpu() && kernel_size > kCudaMaxConvKernel)
    fail("{}: conv kernel size {} has no CUDA kernel (at most {}); run this model with --device cpu", layer,
         kernel_size, kCudaMaxConvKernel);
}

void causal_conv1d(const CausalConv1dArgs& args) {
  STRATA_CHECK(args.x.rank() == 2 && args.weight.rank() == 2);
  const int64_t t = args.x.dim(0), c = args.x.dim(1), k = args.weight.dim(1);
  STRATA_CHECK_MSG(args.weight.dim(0) == c && k >= 2, "causal_conv1d weight {} for {} channels",
                   args.weight.shape().str(), c);
  STRATA_CHECK(args.weight.dtype() == DType::kF32 && args.conv_state.dtype() == DType::kF32);
  if (args.bias.defined()) expect_shape(args.bias, {c}, "causal_conv1d bias");
  if (args.state_slots.defined()) {
    STRATA_CHECK_MSG(args.conv_state.rank() == 3 && !args.intermediate_states.defined(),
                     "causal_conv1d: batched decode needs conv_state [num_slots, C, K-1], got {}",
                     args.conv_state.shape().str());
    expect_shape(args.conv_state, {args.conv_state.dim(0), c, k - 1}, "causal_conv1d conv_state");
    expect_shape(args.state_slots, {t}, "causal_conv1d state_slots");
    STRATA_CHECK(args.state_slots.dtype() == DType::kI32 && args.state_slots.device() == args.x.device());
  } else {
    expect_shape(args.conv_state, {c, k - 1}, "causal_conv1d conv_state");
  }
  expect_shape(args.out, args.x.shape(), "causal_conv1d out");
  if (args.intermediate_states.defined())
    expect_shape(args.intermediate_states, {t, c, k - 1}, "causal_conv1d intermediate_states");
  STRATA_DISPATCH(args.x.device(), cpu::causal_conv1d(args), cuda::causal_conv1d(args));
}

}  // namespace strata::ops
