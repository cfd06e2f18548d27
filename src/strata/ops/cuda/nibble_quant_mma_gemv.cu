// The entry points of the nibble-coded GEMVs: checks, launch shapes, and the dtype's format
// (k_quant_mma_gemv.cu, legacy_quant_mma_gemv.cu).
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"

#include "strata/ops/cuda/nibble_mma.cuh"
#include "strata/weights/device_layout.h"

namespace strata::cuda {
namespace {

using mma_gemv::Params;
using nibble_mma::kSuperCols;

bool is_k_quant(DType dtype) { return dtype == DType::kQ4_K || dtype == DType::kQ5_K || dtype == DType::kQ6_K; }

bool out_supported(DType out) { return out == DType::kBF16 || out == DType::kF32; }

void launch_format(DType dtype, DType out, const Params& params, unsigned pairs, mma_gemv::LaunchShape shape,
                   cudaStream_t stream) {
  if (is_k_quant(dtype)) return nibble_mma::launch_k_quant(dtype, out, params, pairs, shape, stream);
  nibble_mma::launch_legacy(dtype, out, params, pairs, shape, stream);
}

// Launch shapes measured on the k-quants (gpu_moe_bench --k-quant, H100), which the legacy types
// share (the same bytes a value). 1-8 rows are latency-bound at one block of 137 registers a SM
// (ncu: 12% occupancy, issue slots 20-30% busy): two blocks, persistent, keep loads in flight.
// Q6_K's unit takes more registers than two blocks allow: at a vocabulary's rows 4 warps beat
// the two-block launch (lm_head 202 against 245 us); elsewhere within 5% of it.
mma_gemv::LaunchShape dense_shape(NibbleMmaGemvVariant variant, DType dtype, const Params& params) {
  switch (variant) {
    case NibbleMmaGemvVariant::kWarps8: return {.warps = 8};
    case NibbleMmaGemvVariant::kWarps4: return {.warps = 4};
    case NibbleMmaGemvVariant::kWarps2: return {.warps = 2};
    case NibbleMmaGemvVariant::kWarps8TwoBlocks: return {.warps = 8, .two_blocks = true};
    case NibbleMmaGemvVariant::kPersistent: return {.warps = 8, .two_blocks = true, .persistent = true};
    case NibbleMmaGemvVariant::kAuto: break;
  }
  if (dtype == DType::kQ6_K && params.n >= 32768) return {.warps = 4};
  if (params.rows <= 8) return {.warps = 8, .two_blocks = true, .persistent = true};
  return {.warps = mma_gemv::auto_warps(params.rows, params.units)};
}

// Experts: short rows (down, K = 768: 3 units) run best as 2-warp blocks (Q4_K 8 tokens 66.8
// against 174.7 us at 8 warps); longer ones (gate_up) as the persistent two-block grid (79.4
// against 124.8 us).
mma_gemv::LaunchShape expert_shape(NibbleMmaGemvVariant variant, DType dtype, const Params& params) {
  if (variant != NibbleMmaGemvVariant::kAuto) return dense_shape(variant, dtype, params);
  if (params.units <= 4) return {.warps = 2};
  return {.warps = 8, .two_blocks = true, .persistent = true};
}

}  // namespace

bool is_nibble_quant(DType dtype) {
  return is_k_quant(dtype) || dtype == DType::kQ4_0 || dtype == DType::kQ4_1 || dtype == DType::kQ5_0 ||
         dtype == DType::kQ5_1;
}

bool nibble_quant_mma_gemv_supported(DType dtype, const QuantGemvArgs& args) {
  return is_nibble_quant(dtype) && keeps_device_layout(dtype, args.k) && args.m >= 1 &&
         args.m <= kNibbleQuantMmaGemvMaxRows && !args.gated_input && mma_gemv::aligned(args.x, 8) &&
         mma_gemv::aligned(args.weight, 16) && out_supported(args.out_dtype);
}

void nibble_quant_mma_gemv(DType dtype, const QuantGemvArgs& args, cudaStream_t stream, NibbleMmaGemvVariant variant) {
  if (args.n == 0) return;
  STRATA_CHECK(nibble_quant_mma_gemv_supported(dtype, args));
  Params params = mma_gemv::params_for(args);
  params.units = args.k / kSuperCols;
  launch_format(dtype, args.out_dtype, params, 1, dense_shape(variant, dtype, params), stream);
}

bool nibble_quant_mma_gemv_experts_supported(DType dtype, const QuantExpertArgs& args) {
  return is_nibble_quant(dtype) && keeps_device_layout(dtype, args.k) && mma_gemv::aligned(args.x, 8) &&
         mma_gemv::aligned(args.weights, 16) && args.pairs_per_x >= 1 && args.num_pairs <= 65535 &&
         out_supported(args.out_dtype);
}

void nibble_quant_mma_gemv_experts(DType dtype, const QuantExpertArgs& args, cudaStream_t stream,
                                   NibbleMmaGemvVariant variant) {
  if (args.num_pairs == 0 || args.n == 0) return;
  STRATA_CHECK(nibble_quant_mma_gemv_experts_supported(dtype, args));
  Params params = mma_gemv::params_for(args);
  params.units = args.k / kSuperCols;
  launch_format(dtype, args.out_dtype, params, static_cast<unsigned>(args.num_pairs),
                expert_shape(variant, dtype, params), stream);
}

void dequantize_nibble_quant_to_bf16(DType dtype, const void* src, int64_t rows, int64_t k, void* dst) {
  STRATA_CHECK(k % kSuperCols == 0 && is_nibble_quant(dtype));
  const Params p{.x = nullptr, .weight = static_cast<const uint8_t*>(src), .bias = nullptr, .out = nullptr,
                 .n = rows, .k = k, .units = k / kSuperCols, .rows = 0, .accumulate = false};
  auto* out = static_cast<mma_gemv::bf16*>(dst);
  if (is_k_quant(dtype)) return nibble_mma::widen_k_quant(dtype, p, out, current_stream());
  nibble_mma::widen_legacy(dtype, p, out, current_stream());
}

}  // namespace strata::cuda
