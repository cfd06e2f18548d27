#include "strata/ops/gated_delta_rule.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "strata/ops/dispatch.h"

namespace strata::ops {

void gated_delta_rule(const GatedDeltaRuleArgs& args) {
  const bool batched = args.state_slots.defined();
  STRATA_CHECK(args.qkv.rank() == 2 && args.state.rank() == (batched ? 4 : 3) && args.out.rank() == 3);
  const int64_t t = args.qkv.dim(0), nv = args.state.dim(-3), dk = args.state.dim(-2);
  const int64_t dv = args.state.dim(-1);
  const int64_t key_cols = args.qkv.dim(1) - nv * dv;
  STRATA_CHECK_MSG(key_cols > 0 && key_cols % (2 * dk) == 0 && nv % (key_cols / (2 * dk)) == 0,
                   "gated_delta_rule: qkv width {} does not fit {} value heads of {}x{}",
                   args.qkv.dim(1), nv, dk, dv);
  STRATA_CHECK(args.state.dtype() == DType::kF32 && args.A_log.dtype() == DType::kF32 &&
               args.dt_bias.dtype() == DType::kF32);
  expect_shape(args.a, {t, nv}, "gated_delta_rule a");
  expect_shape(args.b, {t, nv}, "gated_delta_rule b");
  expect_shape(args.A_log, {nv}, "gated_delta_rule A_log");
  expect_shape(args.dt_bias, {nv}, "gated_delta_rule dt_bias");
  expect_shape(args.out, {t, nv, dv}, "gated_delta_rule out");
  if (args.intermediate_states.defined())
    expect_shape(args.intermediate_states, {t, nv, dk, dv}, "gated_delta_rule intermediate_states");
  if (batched) {
    STRATA_CHECK_MSG(!args.intermediate_states.defined(), "gated_delta_rule: batched decode keeps no intermediates");
    expect_shape(args.state_slots, {t}, "gated_delta_rule state_slots");
    STRATA_CHECK(args.state_slots.dtype() == DType::kI32 && args.state_slots.device() == args.qkv.device());
  }
  STRATA_DISPATCH(args.qkv.device(), cpu::gated_delta_rule(args), cuda::gated_delta_rule(args));
}

GatedDeltaRuleForm gated_delta_rule_cuda_form(int64_t num_tokens, int64_t k_head_dim,
                                              int64_t v_head_dim, bool intermediate_states) {
  const bool shape_ok = (k_head_dim == 32 || k_head_dim == 64 || k_head_dim == 128) &&
                        v_head_dim > 0 && v_head_dim % 32 == 0;
  return !intermediate_states && shape_ok && num_tokens >= kGatedDeltaRuleChunkTokens
             ? GatedDeltaRuleForm::kChunked
             : GatedDeltaRuleForm::kRecurrent;
}

void check_gated_delta_rule_supported(Device device, int64_t k_head_dim, const std::string& layer) {
  if (device.is_cpu() || std::ranges::find(kCudaGatedDeltaRuleKeyHeadDims, k_head_dim) !=
                             std::end(kCudaGatedDeltaRuleKeyHeadDims))
    return;
  fail("{}: linear_key_head_dim {} has no CUDA kernel (supported: {}); run this model with --device cpu", layer,
       k_head_dim, fmt::join(kCudaGatedDeltaRuleKeyHeadDims, ", "));
}

}  // namespace strata::ops
