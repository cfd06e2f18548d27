#include "strata/ops/hyper_connection.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

void expect_cpu(const Tensor& t, const char* op) {
  STRATA_CHECK_MSG(t.device().is_cpu(), "{} has no CUDA kernel; check_hyper_connection_supported refuses CUDA", op);
}

}  // namespace

void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb) {
  const int64_t n = options.num_streams;
  STRATA_CHECK(n > 0 && options.sinkhorn_iters >= 1 && mixes.rank() == 2);
  const int64_t t = mixes.dim(0);
  for (const Tensor* x : {&mixes, &base, &scale, &pre, &post, &comb}) STRATA_CHECK(x->dtype() == DType::kF32);
  expect_shape(mixes, {t, (2 + n) * n}, "hyper_connection_weights mixes");
  expect_shape(base, {(2 + n) * n}, "hyper_connection_weights base");
  expect_shape(scale, {3}, "hyper_connection_weights scale");
  expect_shape(pre, {t, n}, "hyper_connection_weights pre");
  expect_shape(post, {t, n}, "hyper_connection_weights post");
  expect_shape(comb, {t, n, n}, "hyper_connection_weights comb");
  expect_cpu(mixes, "hyper_connection_weights");
  cpu::hyper_connection_weights(mixes, base, scale, options, pre, post, comb);
}

void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre) {
  STRATA_CHECK(mixes.rank() == 2 && mixes.dtype() == DType::kF32 && pre.dtype() == DType::kF32);
  expect_shape(base, {mixes.dim(1)}, "hyper_head_weights base");
  expect_shape(scale, {1}, "hyper_head_weights scale");
  expect_shape(pre, mixes.shape(), "hyper_head_weights pre");
  expect_cpu(mixes, "hyper_head_weights");
  cpu::hyper_head_weights(mixes, base, scale, eps, pre);
}

void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out) {
  STRATA_CHECK(streams.rank() == 3 && pre.dtype() == DType::kF32 && out.dtype() == streams.dtype());
  expect_shape(pre, {streams.dim(0), streams.dim(1)}, "hyper_collapse pre");
  expect_shape(out, {streams.dim(0), streams.dim(2)}, "hyper_collapse out");
  STRATA_CHECK(streams.dtype() == DType::kF32);
  expect_cpu(streams, "hyper_collapse");
  cpu::hyper_collapse(streams, pre, out);
}

void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb) {
  STRATA_CHECK(streams.rank() == 3 && streams.dtype() == DType::kF32 && block_out.dtype() == DType::kF32);
  const int64_t t = streams.dim(0), n = streams.dim(1);
  expect_shape(block_out, {t, streams.dim(2)}, "hyper_expand block_out");
  expect_shape(post, {t, n}, "hyper_expand post");
  expect_shape(comb, {t, n, n}, "hyper_expand comb");
  expect_cpu(streams, "hyper_expand");
  cpu::hyper_expand(streams, block_out, post, comb);
}

void hyper_repeat(const Tensor& x, const Tensor& streams) {
  STRATA_CHECK(streams.rank() == 3);
  expect_shape(x, {streams.dim(0), streams.dim(2)}, "hyper_repeat x");
  expect_activations({&x, &streams}, "hyper_repeat");
  if (streams.numel() == 0) return;
  STRATA_DISPATCH(streams.device(), cpu::hyper_repeat(x, streams), cuda::hyper_repeat(x, streams));
}

void check_hyper_connection_supported(Device device, const std::string& layer) {
  if (!device.is_cpu())
    fail("{}: hyper-connection streams (hc_mult) have no CUDA kernels yet; run this model with --device cpu", layer);
}

}  // namespace strata::ops
