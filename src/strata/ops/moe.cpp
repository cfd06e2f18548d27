#include "strata/ops/moe.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void check_experts_supported(Device device, int64_t num_experts, int64_t expert_dim, int64_t intermediate_size,
                             const std::string& layer) {
  if (device.is_cpu()) return;
  if (num_experts > kCudaMaxExperts)
    fail("{}: {} experts exceed the CUDA grouping kernel's limit of {}; run this model with --device cpu", layer,
         num_experts, kCudaMaxExperts);
  for (const int64_t size : {expert_dim, intermediate_size})
    if (size % kCudaExpertDimMultiple != 0)
      fail("{}: expert width {} is not a multiple of {}, which the CUDA expert kernels need; run this model "
           "with --device cpu", layer, size, kCudaExpertDimMultiple);
}

void moe_route(const Tensor& router_logits, const Tensor& topk_ids, const Tensor& topk_weights,
               const MoeRouteOptions& options) {
  STRATA_CHECK(router_logits.rank() == 2 && router_logits.dtype() == DType::kF32);
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1);
  STRATA_CHECK_MSG(options.top_k >= 1 && options.top_k <= e, "moe_route: top_k {} of {} experts",
                   options.top_k, e);
  expect_shape(topk_ids, {t, options.top_k}, "moe_route topk_ids");
  expect_shape(topk_weights, {t, options.top_k}, "moe_route topk_weights");
  STRATA_CHECK(topk_ids.dtype() == DType::kI32 && topk_weights.dtype() == DType::kF32);
  STRATA_DISPATCH(router_logits.device(), cpu::moe_route(router_logits, topk_ids, topk_weights, options),
                  cuda::moe_route(router_logits, topk_ids, topk_weights, options));
}

void moe_route_biased(const Tensor& router_logits, const Tensor& correction_bias, const Tensor& topk_ids,
                      const Tensor& topk_weights, const MoeRouteOptions& options) {
  STRATA_CHECK(router_logits.rank() == 2 && router_logits.dtype() == DType::kF32);
  const int64_t t = router_logits.dim(0), e = router_logits.dim(1);
  STRATA_CHECK_MSG(options.top_k >= 1 && options.top_k <= e, "moe_route_biased: top_k {} of {} experts",
                   options.top_k, e);
  STRATA_CHECK_MSG(options.scoring == MoeScoring::kSigmoid || options.scoring == MoeScoring::kSqrtSoftplus,
                   "moe_route_biased scores with a sigmoid or sqrt(softplus)");
  STRATA_CHECK_MSG(options.n_group >= 1 && e % options.n_group == 0 && (options.n_group == 1 || e / options.n_group >= 2) &&
                       options.topk_group >= 1 && options.topk_group <= options.n_group &&
                       options.top_k <= options.topk_group * (e / options.n_group),
                   "moe_route_biased: {} experts in {} groups, {} groups and {} experts chosen", e, options.n_group,
                   options.topk_group, options.top_k);
  expect_shape(correction_bias, {e}, "moe_route_biased correction_bias");
  STRATA_CHECK(correction_bias.dtype() == DType::kF32);
  expect_shape(topk_ids, {t, options.top_k}, "moe_route_biased topk_ids");
  expect_shape(topk_weights, {t, options.top_k}, "moe_route_biased topk_weights");
  STRATA_CHECK(topk_ids.dtype() == DType::kI32 && topk_weights.dtype() == DType::kF32);
  STRATA_DISPATCH(router_logits.device(),
                  cpu::moe_route_biased(router_logits, correction_bias, topk_ids, topk_weights, options),
                  cuda::moe_route_biased(router_logits, correction_bias, topk_ids, topk_weights, options));
}

void moe_route_by_table(const Tensor& router_logits, const Tensor& token_ids, const Tensor& tid2eid,
                        const Tensor& topk_ids, const Tensor& topk_weights, const MoeRouteOptions& options) {
  STRATA_CHECK(router_logits.rank() == 2 && router_logits.dtype() == DType::kF32 && options.scoring != MoeScoring::kSoftmax);
  const int64_t t = router_logits.dim(0);
  STRATA_CHECK(tid2eid.rank() == 2 && tid2eid.dim(1) == options.top_k && tid2eid.dtype() == DType::kI32);
  expect_shape(token_ids, {t}, "moe_route_by_table token_ids");
  expect_shape(topk_ids, {t, options.top_k}, "moe_route_by_table topk_ids");
  expect_shape(topk_weights, {t, options.top_k}, "moe_route_by_table topk_weights");
  STRATA_CHECK(token_ids.dtype() == DType::kI32 && topk_ids.dtype() == DType::kI32 && topk_weights.dtype() == DType::kF32);
  for (const Tensor* on_device : {&token_ids, &tid2eid, &topk_ids, &topk_weights})
    STRATA_CHECK_MSG(on_device->device() == router_logits.device(), "moe_route_by_table: tensors on two devices");
  STRATA_DISPATCH(router_logits.device(),
                  cpu::moe_route_by_table(router_logits, token_ids, tid2eid, topk_ids, topk_weights, options),
                  cuda::moe_route_by_table(router_logits, token_ids, tid2eid, topk_ids, topk_weights, options));
}

void add_grouped_bias(const Tensor& y, const Tensor& bias, const Tensor& expert_offsets) {
  STRATA_CHECK(y.rank() == 2 && bias.rank() == 2 && bias.dim(1) == y.dim(1) && bias.dtype() == DType::kF32);
  STRATA_CHECK(y.dtype() == DType::kF32 || y.dtype() == DType::kBF16);
  if (expert_offsets.defined()) {
    expect_shape(expert_offsets, {bias.dim(0) + 1}, "add_grouped_bias expert_offsets");
  } else {
    STRATA_CHECK(bias.dim(0) == 1);
  }
  STRATA_DISPATCH(y.device(), cpu::add_grouped_bias(y, bias, expert_offsets),
                  cuda::add_grouped_bias(y, bias, expert_offsets));
}

void moe_group(const Tensor& topk_ids, const MoeGroups& groups) {
  STRATA_CHECK(topk_ids.rank() == 2 && topk_ids.dtype() == DType::kI32);
  const int64_t pairs = topk_ids.numel();
  expect_shape(groups.sorted_pairs, {pairs}, "moe_group sorted_pairs");
  expect_shape(groups.token_rows, {pairs}, "moe_group token_rows");
  STRATA_CHECK(groups.expert_offsets.rank() == 1 && groups.expert_offsets.dim(0) >= 2);
  STRATA_DISPATCH(topk_ids.device(), cpu::moe_group(topk_ids, groups), cuda::moe_group(topk_ids, groups));
}

void grouped_linear(const Tensor& x, const Tensor& weights, const Tensor& expert_offsets,
                    const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && weights.rank() == 3 && weights.dim(2) == x.dim(1));
  expect_shape(expert_offsets, {weights.dim(0) + 1}, "grouped_linear expert_offsets");
  expect_shape(out, {x.dim(0), weights.dim(1)}, "grouped_linear out");
  STRATA_DISPATCH(x.device(), cpu::grouped_linear(x, weights, expert_offsets, out),
                  cuda::grouped_linear(x, weights, expert_offsets, out));
}

void moe_combine(const Tensor& y, const Tensor& sorted_pairs, const Tensor& topk_weights,
                 const Tensor& out, const MoeCombineOptions& options) {
  STRATA_CHECK(y.rank() == 2 && topk_weights.rank() == 2 && topk_weights.dtype() == DType::kF32);
  const int64_t t = topk_weights.dim(0), k = topk_weights.dim(1);
  expect_shape(y, {t * k, out.dim(1)}, "moe_combine y");
  if (sorted_pairs.defined()) expect_shape(sorted_pairs, {t * k}, "moe_combine sorted_pairs");
  expect_shape(out, {t, y.dim(1)}, "moe_combine out");
  STRATA_DISPATCH(y.device(), cpu::moe_combine(y, sorted_pairs, topk_weights, out, options),
                  cuda::moe_combine(y, sorted_pairs, topk_weights, out, options));
}

void add_sigmoid_gated(const Tensor& x, const Tensor& y, const Tensor& gate) {
  STRATA_CHECK(x.rank() == 2 && gate.dtype() == DType::kF32);
  expect_shape(y, x.shape(), "add_sigmoid_gated y");
  expect_shape(gate, {x.dim(0), 1}, "add_sigmoid_gated gate");
  STRATA_DISPATCH(x.device(), cpu::add_sigmoid_gated(x, y, gate), cuda::add_sigmoid_gated(x, y, gate));
}

// CPU only: the CUDA packing kernels are still to come (MoeFfn refuses dispatch on a GPU at build).
void moe_count_by_rank(const Tensor& topk_ids, int64_t num_experts, const Tensor& counts) {
  STRATA_CHECK(topk_ids.rank() == 2 && topk_ids.dtype() == DType::kI32 && counts.dtype() == DType::kI32);
  STRATA_CHECK(counts.rank() == 1 && num_experts % counts.dim(0) == 0);
  STRATA_CHECK_MSG(topk_ids.device().is_cpu(), "moe_count_by_rank runs on the CPU only");
  cpu::moe_count_by_rank(topk_ids, num_experts, counts);
}

void moe_pack_by_rank(const Tensor& x, const Tensor& topk_ids, int64_t ranks, const MoeDispatchRows& rows) {
  STRATA_CHECK(x.rank() == 2 && topk_ids.rank() == 2 && topk_ids.dim(0) == x.dim(0));
  STRATA_CHECK(ranks > 0 && rows.num_experts % ranks == 0 && rows.send_x.dim(0) % ranks == 0);
  expect_shape(rows.send_x, {rows.send_x.dim(0), x.dim(1)}, "moe_pack_by_rank send_x");
  expect_shape(rows.send_ids, {rows.send_x.dim(0), 1}, "moe_pack_by_rank send_ids");
  expect_shape(rows.pair_rows, {topk_ids.numel()}, "moe_pack_by_rank pair_rows");
  STRATA_CHECK(x.dtype() == rows.send_x.dtype() && rows.send_ids.dtype() == DType::kI32);
  STRATA_CHECK_MSG(x.device().is_cpu(), "moe_pack_by_rank runs on the CPU only");
  cpu::moe_pack_by_rank(x, topk_ids, ranks, rows);
}

}  // namespace strata::ops
