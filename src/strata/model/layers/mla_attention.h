// Multi-head latent attention (DeepSeek-V2/V3): queries through an optional low-rank
// q_a -> norm -> q_b path; keys and values from one compressed latent (kv_a -> norm ->
// kv_b) plus a rotary key part shared by all heads. The latent is expanded per head into
// the ordinary paged cache (ops/mla.h), so the ordinary attention kernels serve it; the
// rotary dims are moved to the front of each head, de-interleaved, at load. Under tensor
// parallelism a rank holds its query heads' rows of q(_b)_proj and kv_b_proj and their
// columns of o_proj; the small q_a and kv_a projections are replicated, as vLLM keeps them.
#pragma once

#include "strata/model/layer.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model_weights.h"
#include "strata/ops/rope.h"

namespace strata {

struct MlaOptions {
  int64_t hidden_size = 0;
  int64_t num_heads = 0;
  int64_t q_lora_rank = 0;  // 0: a plain q_proj
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool rope_interleave = true;  // rotary pairs are (2i, 2i + 1) in the checkpoint
  float rms_norm_eps = 1e-6f;
  float scale = 0.0f;           // softmax scale (qk_head_dim^-0.5, times yarn's mscale²)
  ops::RopeTable rope;          // over qk_rope_head_dim

  int64_t qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
};

class MlaAttention final : public Mixer {
 public:
  MlaAttention(const MlaOptions& options, const WeightScope& w);
  LayerCaps caps() const override { return {.uses_kv_cache = true, .tensor_parallel = true}; }
  void forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
               SublayerWrite write) const override;

 private:
  // Checkpoint index of each rotary dim in half layout (pair (i, i + rope / 2) was stored
  // as (2i, 2i + 1) when interleaved).
  std::vector<int64_t> rope_order() const;
  // Rows of the per-head [rope | nope] query projection, from the checkpoint's [nope | rope].
  std::vector<int64_t> head_rows() const;
  void project_q(const Tensor& h, const Tensor& q, ForwardContext& ctx) const;

  MlaOptions options_;            // num_heads: this rank's heads
  int64_t first_head_ = 0;        // this rank's first head of the checkpoint's
  int64_t num_checkpoint_heads_ = 0;
  // H below: this rank's heads.
  Tensor q_proj_;                 // [H * qk, hidden] (no q_lora_rank), rows per head [rope | nope]
  Tensor q_a_proj_, q_b_proj_;    // [q_lora, hidden], [H * qk, q_lora] rows per head [rope | nope]
  RmsNorm q_a_norm_;              // [q_lora]
  Tensor kv_a_latent_;            // [kv_lora, hidden]
  Tensor kv_a_rope_;              // [rope, hidden], rows de-interleaved
  RmsNorm kv_a_norm_;             // [kv_lora]
  Tensor kv_b_proj_;              // [H * (nope + v), kv_lora]
  Tensor o_proj_;                 // [hidden, H * v]
  Tensor inv_freq_;               // [rope / 2] f32
};

}  // namespace strata
