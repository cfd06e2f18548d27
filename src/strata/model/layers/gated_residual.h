// Qwen4-Exp's gated hyper-connections (Qwen4ExpTextGatedResidual): n streams [T, n * hidden],
// normed per stream (1 + w). A sublayer reads the mean of the normed streams gated by
// sigmoid(up(silu(down(normed) / n))); its output goes back into stream j scaled by
// 2 sigmoid(inject(normed) / n)[j]. The final mixer injects nothing (a StreamHead). Streams and
// sublayer rows in the activation dtype (f32 on the CPU, bf16 on a GPU); logits f32.
#pragma once

#include "strata/model/forward_context.h"
#include "strata/model/layers/stream_head.h"
#include "strata/model/model_weights.h"

namespace strata {

struct GatedResidualOptions {
  int64_t num_streams = 0;  // hc_count
  int64_t hidden_size = 0;
  int64_t lowrank = 0;      // hc_lowrank
  float rms_norm_eps = 1e-6f;
};

class GatedResidual final : public StreamHead {
 public:
  // Weights under `w`: hc_norm [n hidden], input_mix_weight_down [rank, n hidden],
  // input_mix_weight_up [n hidden, rank] and, with `inject`, block_inject_weight [n, n hidden].
  GatedResidual(const GatedResidualOptions& options, const WeightScope& w, bool inject);

  // streams: [T, n * hidden]; mixed: [T, hidden], the sublayer's input (activations). Returns the
  // injection logits [T, n] f32 (in ctx.workspace) for inject().
  Tensor mix(const Tensor& streams, const Tensor& mixed, ForwardContext& ctx) const;
  // streams[t, j] += 2 sigmoid(logits[t, j] / n) * block_out[t]; block_out: [T, hidden] activations.
  void inject(const Tensor& streams, const Tensor& block_out, const Tensor& logits) const;
  void collapse(const Tensor& streams, const Tensor& out, ForwardContext& ctx) const override;

 private:
  Tensor normed_mix(const Tensor& streams, const Tensor& mixed, ForwardContext& ctx) const;

  GatedResidualOptions options_;
  Tensor norm_;    // [n hidden] f32
  Tensor down_;    // [rank, n hidden]
  Tensor up_;      // [n hidden, rank]
  Tensor inject_;  // [n, n hidden], or undefined for the final mixer
};

}  // namespace strata
