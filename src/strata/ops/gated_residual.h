// Qwen4-Exp's gated hyper-connections: the residual is n streams [T, n, hidden]. Each stream is
// RMS-normed on its own with its own slice of a (1 + w) weight; a sublayer reads the mean over
// streams of sigmoid-gated normed streams, and its output is added back into every stream scaled
// by a per-token, per-stream injection weight. The gates come from linears the caller runs.
// Activations are the backend's (f32 on the CPU, bf16 or f32 on CUDA); gate logits and weights f32.
#pragma once

#include "strata/core/tensor.h"
#include "strata/ops/rms_norm.h"

namespace strata::ops {

// x, out: [T, n * group] activations (one dtype; may alias); weight: [n * group] f32. Each group
// of `group` values of a row is RMS-normed alone, then scaled by its columns of weight (1 + w with
// params.unit_offset).
void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const RmsNormParams& params,
                     const Tensor& out);
// gate_logits: [T, n, hidden] f32; normed: [T, n, hidden] and out: [T, hidden] activations;
// out[t] = mean_j sigmoid(gate_logits[t, j]) * normed[t, j].
void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out);
// streams: [T, n, hidden] updated in place: streams[t, j] += 2 sigmoid(logits[t, j] / n) * block_out[t];
// logits: [T, n] f32 (block_inject_weight of the normed streams); block_out: [T, hidden] like streams.
void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits);
}  // namespace strata::ops

namespace strata::cpu {
void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const ops::RmsNormParams& params,
                     const Tensor& out);
void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out);
void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits);
}  // namespace strata::cpu

namespace strata::cuda {
void stream_rms_norm(const Tensor& x, const Tensor& weight, int64_t group, const ops::RmsNormParams& params,
                     const Tensor& out);
void gated_stream_mean(const Tensor& gate_logits, const Tensor& normed, const Tensor& out);
void stream_inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits);
}  // namespace strata::cuda
