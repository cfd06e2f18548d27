#include "strata/ops/ssd_scan.h"

#include <algorithm>

#include <fmt/ranges.h>

#include "strata/ops/dispatch.h"

namespace strata::ops {

void ssd_scan(const SsdScanArgs& args, const SsdScanOptions& options) {
  const bool batched = args.state_slots.defined();
  STRATA_CHECK(args.xbc.rank() == 2 && args.state.rank() == (batched ? 4 : 3) && options.n_groups >= 1);
  const int64_t t = args.xbc.dim(0), nh = args.state.dim(-3), hd = args.state.dim(-2);
  const int64_t n = args.state.dim(-1);
  STRATA_CHECK_MSG(args.xbc.dim(1) == nh * hd + 2 * options.n_groups * n && nh % options.n_groups == 0,
                   "ssd_scan: xbc width {} does not fit {} heads of {}x{} in {} groups",
                   args.xbc.dim(1), nh, hd, n, options.n_groups);
  STRATA_CHECK(args.state.dtype() == DType::kF32 && args.A_log.dtype() == DType::kF32 &&
               args.dt_bias.dtype() == DType::kF32);
  expect_shape(args.dt, {t, nh}, "ssd_scan dt");
  expect_shape(args.dt_bias, {nh}, "ssd_scan dt_bias");
  expect_shape(args.A_log, {nh}, "ssd_scan A_log");
  if (args.D.defined()) expect_shape(args.D, {nh}, "ssd_scan D");
  expect_shape(args.y, {t, nh, hd}, "ssd_scan y");
  if (args.intermediate_states.defined())
    expect_shape(args.intermediate_states, {t, nh, hd, n}, "ssd_scan intermediate_states");
  if (batched) {
    STRATA_CHECK_MSG(!args.intermediate_states.defined(), "ssd_scan: batched decode keeps no intermediates");
    expect_shape(args.state_slots, {t}, "ssd_scan state_slots");
    STRATA_CHECK(args.state_slots.dtype() == DType::kI32 && args.state_slots.device() == args.xbc.device());
  }
  STRATA_DISPATCH(args.xbc.device(), cpu::ssd_scan(args, options), cuda::ssd_scan(args, options));
}

SsdScanForm ssd_scan_cuda_form(int64_t num_tokens, int64_t head_dim, int64_t state_size,
                               bool intermediate_states) {
  const bool shape_ok = state_size >= 16 && state_size <= 256 && (state_size & (state_size - 1)) == 0 &&
                        head_dim > 0 && head_dim % 32 == 0;
  return !intermediate_states && shape_ok && num_tokens >= kSsdScanChunkTokens ? SsdScanForm::kChunked
                                                                               : SsdScanForm::kRecurrent;
}

void check_ssd_scan_supported(Device device, int64_t head_dim, int64_t state_size, const std::string& layer) {
  if (device.is_cpu()) return;
  if (std::ranges::find(kCudaSsdStateSizes, state_size) == std::end(kCudaSsdStateSizes))
    fail("{}: ssm_state_size {} has no CUDA kernel (supported: {}); run this model with --device cpu", layer,
         state_size, fmt::join(kCudaSsdStateSizes, ", "));
  if (head_dim < 1 || head_dim > kCudaSsdMaxHeadDim)
    fail("{}: head_dim {} has no CUDA kernel (1 to {}); run this model with --device cpu", layer, head_dim,
         kCudaSsdMaxHeadDim);
}

}  // namespace strata::ops
