#include "strata/ops/gated_residual.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {

void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const RmsNormParams& params,
                     const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && group > 0 && x.dim(1) % group == 0);
  expect_shape(weight, {x.dim(1)}, "stream_rms_norm weight");
  expect_shape(out, x.shape(), "stream_rms_norm out");
  expect_activations({&x, &out}, "stream_rms_norm");
  expect_f32_on(x.device(), {&weight}, "stream_rms_norm weight");
  if (x.numel() == 0) return;
  STRATA_DISPATCH(x.device(), cpu::stream_rms_norm(x, weight, group, params, out),
                  cuda::stream_rms_norm(x, weight, group, params, out));
}

void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out) {
  STRATA_CHECK(normed.rank() == 3);
  expect_shape(gate_logits, normed.shape(), "gated_stream_mean gate_logits");
  expect_shape(out, {normed.dim(0), normed.dim(2)}, "gated_stream_mean out");
  expect_activations({&normed, &out}, "gated_stream_mean");
  expect_f32_on(normed.device(), {&gate_logits}, "gated_stream_mean gate_logits");
  if (out.numel() == 0) return;
  STRATA_DISPATCH(normed.device(), cpu::gated_stream_mean(gate_logits, normed, out),
                  cuda::gated_stream_mean(gate_logits, normed, out));
}

void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) {
  STRATA_CHECK(streams.rank() == 3);
  expect_shape(block_out, {streams.dim(0), streams.dim(2)}, "stream_inject block_out");
  expect_shape(logits, {streams.dim(0), streams.dim(1)}, "stream_inject logits");
  expect_activations({&streams, &block_out}, "stream_inject");
  expect_f32_on(streams.device(), {&logits}, "stream_inject logits");
  if (streams.numel() == 0) return;
  STRATA_DISPATCH(streams.device(), cpu::stream_inject(streams, block_out, logits),
                  cuda::stream_inject(streams, block_out, logits));
}

}  // namespace strata::ops
