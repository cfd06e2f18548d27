// DeepSeek-V4's manifold-constrained hyper-connections as weights a block holds: the residual is
// n streams, [T, n * hidden]; before a sublayer the streams collapse to its input by weights
// computed from their unweighted RMS norm (fn, base, scale: `hc_attn_*` / `hc_ffn_*`), after it
// the output expands back and the streams mix (ops/hyper_connection.h). The hyper head collapses
// them once more before the final norm (`hc_head`). The mixes are f32 on both backends; the
// streams are the step's activations (f32 on the CPU, bf16 on a GPU).
#pragma once

#include <string>

#include "strata/model/forward_context.h"
#include "strata/model/layers/stream_head.h"
#include "strata/model/model_weights.h"
#include "strata/ops/hyper_connection.h"

namespace strata {

struct HyperConnectionOptions {
  ops::HyperWeightsOptions weights;  // num_streams (hc_mult), sinkhorn_iters, eps (hc_eps)
  int64_t hidden_size = 0;
  float rms_norm_eps = 1e-6f;
};

class HyperConnection {
 public:
  // Weights `<prefix>_fn` [(2 + n) n, n hidden], `<prefix>_base` [(2 + n) n], `<prefix>_scale` [3] under `w`.
  HyperConnection(const HyperConnectionOptions& options, const WeightScope& w, const std::string& prefix);

  struct Mix {
    Tensor post;  // [T, n] f32
    Tensor comb;  // [T, n, n] f32
  };
  // streams: [T, n * hidden]; collapsed: [T, hidden], the sublayer's input (activations). The mix for
  // expand() lives in ctx.workspace.
  Mix collapse(const Tensor& streams, const Tensor& collapsed, ForwardContext& ctx) const;
  // streams = post * block_out + comb^T streams. block_out: [T, hidden] (activations).
  void expand(const Tensor& streams, const Tensor& block_out, const Mix& mix) const;

 private:
  HyperConnectionOptions options_;
  Tensor fn_, base_, scale_;  // f32
  Tensor ones_;               // [n hidden] f32: the norm is unweighted
};

class HyperHead final : public StreamHead {
 public:
  // Weights `hc_fn` [n, n hidden], `hc_base` [n], `hc_scale` [1] under `w` (model.hc_head).
  HyperHead(const HyperConnectionOptions& options, const WeightScope& w);
  // streams: [T, n * hidden]; out: [T, hidden] (activations).
  void collapse(const Tensor& streams, const Tensor& out, ForwardContext& ctx) const override;

 private:
  HyperConnectionOptions options_;
  Tensor fn_, base_, scale_, ones_;
};

}  // namespace strata
