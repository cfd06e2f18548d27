#include "strata/ops/gated_residual.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

void expect_cpu_f32(std::initializer_list<const Tensor*> tensors, const char* op) {
  for (const Tensor* t : tensors) {
    STRATA_CHECK_MSG(t->dtype() == DType::kF32, "{} takes f32 tensors", op);
    STRATA_CHECK_MSG(t->device().is_cpu(), "{} has no CUDA kernel; check_gated_residual_supported refuses CUDA", op);
  }
}

}  // namespace

void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const RmsNormParams& params,
                     const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && group > 0 && x.dim(1) % group == 0);
  expect_shape(weight, {x.dim(1)}, "stream_rms_norm weight");
  expect_shape(out, x.shape(), "stream_rms_norm out");
  expect_cpu_f32({&x, &weight, &out}, "stream_rms_norm");
  cpu::stream_rms_norm(x, weight, group, params, out);
}

void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out) {
  STRATA_CHECK(normed.rank() == 3);
  expect_shape(gate_logits, normed.shape(), "gated_stream_mean gate_logits");
  expect_shape(out, {normed.dim(0), normed.dim(2)}, "gated_stream_mean out");
  expect_cpu_f32({&gate_logits, &normed, &out}, "gated_stream_mean");
  cpu::gated_stream_mean(gate_logits, normed, out);
}

void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) {
  STRATA_CHECK(streams.rank() == 3);
  expect_shape(block_out, {streams.dim(0), streams.dim(2)}, "stream_inject block_out");
  expect_shape(logits, {streams.dim(0), streams.dim(1)}, "stream_inject logits");
  expect_cpu_f32({&streams, &block_out, &logits}, "stream_inject");
  cpu::stream_inject(streams, block_out, logits);
}

void check_gated_residual_supported(Device device, const std::string& layer) {
  if (!device.is_cpu())
    fail("{}: Qwen4-Exp's gated hyper-connection streams (hc_count) have no CUDA kernels yet; run this model with "
         "--device cpu", layer);
}

}  // namespace strata::ops
