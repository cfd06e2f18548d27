#include "strata/model/layers/mla_attention.h"

#include "strata/model/layers/attention.h"

#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/linear.h"
#include "strata/ops/mla.h"
#include "strata/ops/paged_attention.h"

namespace strata {

std::vector<int64_t> MlaAttention::rope_order() const {
  const int64_t rope = options_.qk_rope_head_dim, half = rope / 2;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < rope; ++i)
    order.push_back(!options_.rope_interleave ? i : (i < half ? 2 * i : 2 * (i - half) + 1));
  return order;
}

std::vector<int64_t> MlaAttention::head_rows() const {
  const MlaOptions& o = options_;
  const std::vector<int64_t> order = rope_order();
  std::vector<int64_t> rows;
  for (int64_t h = first_head_; h < first_head_ + o.num_heads; ++h) {
    const int64_t base = h * o.qk_head_dim();
    for (int64_t i : order) rows.push_back(base + o.qk_nope_head_dim + i);
    for (int64_t i = 0; i < o.qk_nope_head_dim; ++i) rows.push_back(base + i);
  }
  return rows;
}

MlaAttention::MlaAttention(const MlaOptions& options, const WeightScope& w)
    : options_(options), num_checkpoint_heads_(options.num_heads) {
  ops::check_paged_attention_supported(w.device(), options.qk_head_dim(), w.prefix());
  const auto [head_begin, head_end] = w.shard().range(options.num_heads, "num_attention_heads");
  first_head_ = head_begin;
  options_.num_heads = head_end - head_begin;
  const MlaOptions& o = options_;
  const ModelWeights& weights = w.weights();
  const int64_t q_rows = num_checkpoint_heads_ * o.qk_head_dim();
  const ops::RmsNormParams norm{.eps = o.rms_norm_eps};
  if (o.q_lora_rank > 0) {
    q_a_proj_ = w.get("q_a_proj.weight", {o.q_lora_rank, o.hidden_size});
    q_a_norm_ = {w.get("q_a_layernorm.weight", {o.q_lora_rank}), norm};
    q_b_proj_ = weights.gathered_rows(w.name("q_b_proj.weight"), {q_rows, o.q_lora_rank}, head_rows());
  } else {
    q_proj_ = weights.gathered_rows(w.name("q_proj.weight"), {q_rows, o.hidden_size}, head_rows());
  }
  const Shape kv_a{o.kv_lora_rank + o.qk_rope_head_dim, o.hidden_size};
  std::vector<int64_t> latent_rows(o.kv_lora_rank), rope_rows;
  for (int64_t i = 0; i < o.kv_lora_rank; ++i) latent_rows[i] = i;
  for (int64_t i : rope_order()) rope_rows.push_back(o.kv_lora_rank + i);
  kv_a_latent_ = weights.gathered_rows(w.name("kv_a_proj_with_mqa.weight"), kv_a, latent_rows);
  kv_a_rope_ = weights.gathered_rows(w.name("kv_a_proj_with_mqa.weight"), kv_a, rope_rows);
  kv_a_norm_ = {w.get("kv_a_layernorm.weight", {o.kv_lora_rank}), norm};
  const int64_t kv_b_head = o.qk_nope_head_dim + o.v_head_dim;
  kv_b_proj_ = w.row_range("kv_b_proj.weight", {num_checkpoint_heads_ * kv_b_head, o.kv_lora_rank},
                           head_begin * kv_b_head, head_end * kv_b_head);
  o_proj_ = w.column_shard("o_proj.weight", {o.hidden_size, num_checkpoint_heads_ * o.v_head_dim},
                           "num_attention_heads * v_head_dim");
  inv_freq_ = rope_inv_freq(o.rope, weights.backend());
}

void MlaAttention::project_q(const Tensor& h, const Tensor& q, ForwardContext& ctx) const {
  const int64_t t = h.dim(0);
  const Tensor q_flat = q.reshape({t, q.dim(1) * q.dim(2)});
  if (!q_a_proj_.defined()) return ops::linear(h, q_proj_, Tensor(), q_flat);
  Tensor q_latent = ctx.temp({t, options_.q_lora_rank});
  ops::linear(h, q_a_proj_, Tensor(), q_latent);
  q_a_norm_.apply(q_latent, q_latent);
  ops::linear(q_latent, q_b_proj_, Tensor(), q_flat);
}

void MlaAttention::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                           SublayerWrite write) const {
  const MlaOptions& o = options_;
  const Tensor& h = in.h();
  const int64_t t = h.dim(0), nh = o.num_heads, width = o.qk_head_dim();
  const StepTensors& meta = step.device();
  Tensor q = ctx.temp({t, nh, width});
  project_q(h, q, ctx);
  Tensor latent = ctx.temp({t, o.kv_lora_rank});
  Tensor k_rot = ctx.temp({t, o.qk_rope_head_dim});
  ops::linear(h, kv_a_latent_, Tensor(), latent);
  ops::linear(h, kv_a_rope_, Tensor(), k_rot);
  kv_a_norm_.apply(latent, latent);
  Tensor kv = ctx.temp({t, nh, o.qk_nope_head_dim + o.v_head_dim});
  ops::linear(latent, kv_b_proj_, Tensor(), kv.reshape({t, kv.dim(1) * kv.dim(2)}));
  Tensor k = ctx.temp({t, nh, width}), v = ctx.temp({t, nh, width});
  ops::mla_expand_kv(kv, k_rot, o.qk_nope_head_dim, k, v);
  ops::rope(q, k, meta.positions, inv_freq_,
            {.rotary_dim = o.rope.rotary_dim, .attention_scaling = o.rope.attention_scaling});
  const Tensor& k_cache = ctx.kv_cache->k(ctx.kv_layer);
  const Tensor& v_cache = ctx.kv_cache->v(ctx.kv_layer);
  ops::store_kv(k, v, meta.slot_mapping, k_cache, v_cache);
  Tensor attn = ctx.temp({t, nh, width});
  ops::paged_attention(q, k_cache, v_cache,
                       {.cu_seqlens = meta.cu_seqlens, .kv_lens = meta.kv_lens, .block_tables = meta.block_tables,
                        .num_rows = step.num_rows(), .max_q_len = step.max_q_len(), .max_kv_len = step.max_kv_len()},
                       {.scale = o.scale}, attn);
  Tensor attn_v = ctx.temp({t, nh, o.v_head_dim});
  ops::narrow_heads(attn, attn_v);
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, o.hidden_size});
    ops::linear(attn_v.reshape({t, nh * o.v_head_dim}), o_proj_, Tensor(), partial);
    return finish_row_parallel(partial, out, write, ctx);
  }
  ops::linear(attn_v.reshape({t, nh * o.v_head_dim}), o_proj_, Tensor(), out,
              {.accumulate = write == SublayerWrite::kAdd});
}

}  // namespace strata
