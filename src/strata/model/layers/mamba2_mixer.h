// Mamba-2 mixer (HF Mamba2Mixer / NemotronHMamba2Mixer): in_proj split into the gate z, the
// conv input x|B|C and dt; depthwise causal conv + SiLU; the SSD scan with per-sequence state
// (dt = softplus(dt + dt_bias) clamped, D skip); gated RMSNorm (x * silu(z), then the norm
// per group); out_proj. Under tensor parallelism a rank holds a range of heads with their groups
// (one replicated group when there are fewer groups than ranks) and their state; out_proj is
// row-parallel; a norm group wider than a rank's columns is normalised over the ranks.
#pragma once

#include <limits>

#include "strata/model/layer.h"
#include "strata/model/model_weights.h"

namespace strata {

struct Mamba2MixerOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t n_groups = 1;
  int64_t state_size = 0;  // ssm_state_size
  int64_t conv_kernel = 4;
  int64_t chunk_size = 256;
  bool conv_bias = true;   // use_conv_bias
  bool proj_bias = false;  // use_bias: in_proj and out_proj
  float norm_eps = 1e-5f;
  int64_t norm_group_size = 0;  // 0: the whole intermediate (HF Mamba2)
  float dt_min = 0.0f;
  float dt_max = std::numeric_limits<float>::infinity();
};

class Mamba2Mixer final : public Mixer {
 public:
  // Weights under `w`: in_proj, conv1d, dt_bias, A_log, D, norm, out_proj; this rank's heads of
  // each under w.shard(). `whole` below: the options of the whole layer.
  Mamba2Mixer(const Mamba2MixerOptions& options, const WeightScope& w);
  LayerCaps caps() const override;
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  int64_t inner() const { return options_.num_heads * options_.head_dim; }
  int64_t conv_dim() const { return inner() + 2 * options_.n_groups * options_.state_size; }

  void load_projections(const Mamba2MixerOptions& whole, const WeightScope& w);
  void load_ssm_parameters(const Mamba2MixerOptions& whole, const WeightScope& w);
  void gated_norm(const Tensor& y, const Tensor& z, ForwardContext& ctx) const;

  Mamba2MixerOptions options_;  // this rank's heads and groups; norm_group_size > 0
  bool norm_spans_ranks_ = false;  // norm groups cross ranks' columns: norm_weight_ is whole
  Tensor z_proj_, xbc_proj_, dt_proj_;  // rows of in_proj: [inner | conv_dim | num_heads, hidden]
  Tensor z_bias_, xbc_bias_, dt_bias_proj_;  // the same rows of in_proj.bias, or undefined
  Tensor conv_weight_;  // [conv_dim, conv_kernel] f32
  Tensor conv_bias_;    // [conv_dim] f32 or undefined
  Tensor dt_bias_;      // [num_heads] f32
  Tensor A_log_;        // [num_heads] f32
  Tensor D_;            // [num_heads] f32
  Tensor norm_weight_;  // [inner] f32 (the whole layer's inner when norm_spans_ranks_)
  Tensor out_proj_;     // [hidden, inner]
  Tensor out_bias_;     // [hidden] or undefined; added on rank 0 only
};

}  // namespace strata
