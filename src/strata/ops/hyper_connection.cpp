#include "strata/ops/hyper_connection.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

// The CUDA weights and expand kernels hold n streams in registers (check_hyper_connection_supported
// refuses more at build); a step that meets more is a programming error.
void expect_stream_count(Device device, int64_t n, const char* op) {
  STRATA_CHECK_MSG(n > 0 && (device.is_cpu() || n <= kCudaMaxHyperStreams), "{}: {} streams on {}", op, n,
                   device.is_cpu() ? "the CPU" : "CUDA");
}

}  // namespace

void hyper_connection_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale,
                              const HyperWeightsOptions& options, const Tensor& pre, const Tensor& post,
                              const Tensor& comb) {
  const int64_t n = options.num_streams;
  STRATA_CHECK(options.sinkhorn_iters >= 1 && mixes.rank() == 2);
  expect_stream_count(mixes.device(), n, "hyper_connection_weights");
  const int64_t t = mixes.dim(0);
  expect_f32_on(mixes.device(), {&mixes, &base, &scale, &pre, &post, &comb}, "hyper_connection_weights");
  expect_shape(mixes, {t, (2 + n) * n}, "hyper_connection_weights mixes");
  expect_shape(base, {(2 + n) * n}, "hyper_connection_weights base");
  expect_shape(scale, {3}, "hyper_connection_weights scale");
  expect_shape(pre, {t, n}, "hyper_connection_weights pre");
  expect_shape(post, {t, n}, "hyper_connection_weights post");
  expect_shape(comb, {t, n, n}, "hyper_connection_weights comb");
  if (t == 0) return;
  STRATA_DISPATCH(mixes.device(), cpu::hyper_connection_weights(mixes, base, scale, options, pre, post, comb),
                  cuda::hyper_connection_weights(mixes, base, scale, options, pre, post, comb));
}

void hyper_head_weights(const Tensor& mixes, const Tensor& base, const Tensor& scale, float eps, const Tensor& pre) {
  STRATA_CHECK(mixes.rank() == 2);
  expect_f32_on(mixes.device(), {&mixes, &base, &scale, &pre}, "hyper_head_weights");
  expect_shape(base, {mixes.dim(1)}, "hyper_head_weights base");
  expect_shape(scale, {1}, "hyper_head_weights scale");
  expect_shape(pre, mixes.shape(), "hyper_head_weights pre");
  if (mixes.numel() == 0) return;
  STRATA_DISPATCH(mixes.device(), cpu::hyper_head_weights(mixes, base, scale, eps, pre),
                  cuda::hyper_head_weights(mixes, base, scale, eps, pre));
}

void hyper_collapse(const Tensor& streams, const Tensor& pre, const Tensor& out) {
  STRATA_CHECK(streams.rank() == 3);
  expect_activations({&streams, &out}, "hyper_collapse");
  expect_f32_on(streams.device(), {&pre}, "hyper_collapse");
  expect_shape(pre, {streams.dim(0), streams.dim(1)}, "hyper_collapse pre");
  expect_shape(out, {streams.dim(0), streams.dim(2)}, "hyper_collapse out");
  if (out.numel() == 0) return;
  STRATA_DISPATCH(streams.device(), cpu::hyper_collapse(streams, pre, out), cuda::hyper_collapse(streams, pre, out));
}

void hyper_expand(const Tensor& streams, const Tensor& block_out, const Tensor& post, const Tensor& comb) {
  STRATA_CHECK(streams.rank() == 3);
  const int64_t t = streams.dim(0), n = streams.dim(1);
  expect_stream_count(streams.device(), n, "hyper_expand");
  expect_activations({&streams, &block_out}, "hyper_expand");
  expect_f32_on(streams.device(), {&post, &comb}, "hyper_expand");
  expect_shape(block_out, {t, streams.dim(2)}, "hyper_expand block_out");
  expect_shape(post, {t, n}, "hyper_expand post");
  expect_shape(comb, {t, n, n}, "hyper_expand comb");
  if (streams.numel() == 0) return;
  STRATA_DISPATCH(streams.device(), cpu::hyper_expand(streams, block_out, post, comb),
                  cuda::hyper_expand(streams, block_out, post, comb));
}

void hyper_repeat(const Tensor& x, const Tensor& streams) {
  STRATA_CHECK(streams.rank() == 3);
  expect_shape(x, {streams.dim(0), streams.dim(2)}, "hyper_repeat x");
  expect_activations({&x, &streams}, "hyper_repeat");
  if (streams.numel() == 0) return;
  STRATA_DISPATCH(streams.device(), cpu::hyper_repeat(x, streams), cuda::hyper_repeat(x, streams));
}

void check_hyper_connection_supported(Device device, int64_t num_streams, const std::string& layer) {
  if (num_streams < 1) fail("{}: {} hyper-connection streams (hc_mult); at least 1 expected", layer, num_streams);
  if (!device.is_cpu() && num_streams > kCudaMaxHyperStreams)
    fail("{}: {} hyper-connection streams (hc_mult) have no CUDA kernel (at most {}); run this model with "
         "--device cpu", layer, num_streams, kCudaMaxHyperStreams);
}

}  // namespace strata::ops
