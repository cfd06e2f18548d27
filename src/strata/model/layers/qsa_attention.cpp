#include "strata/model/layers/qsa_attention.h"

#include <algorithm>
#include <cmath>

#include "strata/model/layers/closing_windows.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/block_sparse_attention.h"
#include "strata/ops/compressed_attention.h"
#include "strata/ops/compressed_kv.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"
#include "strata/ops/rope.h"

namespace strata {
namespace {

// A cache's [blocks, block_size, heads, head_dim] as one row per slot.
Tensor as_rows(const Tensor& cache) {
  return cache.reshape({cache.dim(0) * cache.dim(1), cache.dim(2) * cache.dim(3)});
}

}  // namespace

QsaAttention::QsaAttention(const AttentionOptions& attention, const QsaOptions& qsa, const WeightScope& w)
    : options_(local_heads(attention, w.shard())), qsa_(qsa) {
  ops::check_block_sparse_attention_supported(w.device(), qsa.budget, qsa.compress_ratio, w.prefix());
  const int64_t hidden = attention.hidden_size, hd = attention.head_dim, heads = attention.num_heads;
  const int64_t kv_out = attention.num_kv_heads * hd;
  const auto [kv_begin, kv_end] = kv_head_range(w.shard(), attention.num_kv_heads);
  q_proj_ = w.row_shard("q_proj.weight", {2 * heads * hd, hidden}, "num_attention_heads");  // whole heads' q | gate
  k_proj_ = w.row_range("k_proj.weight", {kv_out, hidden}, kv_begin * hd, kv_end * hd);
  v_proj_ = w.row_range("v_proj.weight", {kv_out, hidden}, kv_begin * hd, kv_end * hd);
  o_proj_ = w.column_shard("o_proj.weight", {hidden, heads * hd}, "num_attention_heads * head_dim");
  const ops::RmsNormParams norm{.eps = attention.rms_norm_eps, .unit_offset = true};
  q_norm_ = {w.get("q_norm.weight", {hd}), norm};
  k_norm_ = {w.get("k_norm.weight", {hd}), norm};
  const int64_t index_dim = qsa.index_head_dim;
  const Tensor index_qk = w.get("indexer.index_qk_proj.weight", {(qsa.index_heads + 1) * index_dim, hidden});
  index_q_proj_ = index_qk.slice_rows(0, qsa.index_heads * index_dim);
  index_k_proj_ = index_qk.slice_rows(qsa.index_heads * index_dim, (qsa.index_heads + 1) * index_dim);
  index_q_norm_ = {w.get("indexer.q_layernorm.weight", {index_dim}), norm};
  index_k_norm_ = {w.get("indexer.k_layernorm.weight", {index_dim}), norm};
  inv_freq_ = rope_inv_freq(attention.rope, w.weights().backend());
}

// x: [T, heads, dim] rotated in place on its first rotary_dim dims at `positions` [T] i32.
void QsaAttention::rotate(const Tensor& x, const Tensor& positions, ForwardContext& ctx) const {
  Tensor unused = ctx.temp_f32({x.dim(0), 1, x.dim(2)});
  ops::rope(x, unused, positions, inv_freq_,
            {.rotary_dim = options_.rope.rotary_dim, .attention_scaling = options_.rope.attention_scaling});
}

Tensor QsaAttention::select_blocks(const StepBatch& step, const Tensor& h, const Tensor& k_rows, const Tensor& v_rows,
                                   ForwardContext& ctx) const {
  const int64_t t = h.dim(0), heads = qsa_.index_heads, dim = qsa_.index_head_dim, ratio = qsa_.compress_ratio;
  Tensor key = ctx.temp_f32({t, dim});
  ops::linear(h, index_k_proj_, Tensor(), key);
  ops::store_row_part(key, step.device().slot_mapping, index_column(), k_rows);
  const ClosingWindows blocks = closing_windows(step, ratio, /*overlap=*/false);
  if (const int64_t e = blocks.count(); e > 0) {
    Tensor block_keys = ctx.temp_f32({e, dim});
    ops::mean_row_windows(k_rows, step_i32(blocks.sources, {e, ratio}, ctx), index_column(), block_keys);
    index_k_norm_.apply(block_keys, block_keys);
    rotate(block_keys.reshape({e, 1, dim}), step_i32(blocks.positions, {e}, ctx), ctx);
    ops::store_row_part(block_keys, step_i32(blocks.entry_slots, {e}, ctx), index_column(), v_rows);
  }
  Tensor q = ctx.temp_f32({t, heads, dim});
  ops::linear(h, index_q_proj_, Tensor(), q.reshape({t, heads * dim}));
  index_q_norm_.apply(q.reshape({t * heads, dim}), q.reshape({t * heads, dim}));
  rotate(q, step.device().positions, ctx);
  Tensor selected = ctx.workspace.alloc(DType::kI32, {t, qsa_.budget / ratio});
  const Tensor scores = ctx.backend.device().is_cpu()
                            ? Tensor()
                            : ctx.workspace.alloc(DType::kF32, {t, std::max<int64_t>(1, step.max_kv_len() / ratio)});
  ops::indexer_top_k(q, Tensor(), v_rows, attention_metadata(step),
                     {.head_dim = dim, .block_size = step.block_size(), .rate = ratio, .entry_offset = index_column(),
                      .top_k = qsa_.budget / ratio, .scale = 1.0f / std::sqrt(static_cast<float>(dim)),
                      .scores = scores},
                     selected);
  return selected;
}

void QsaAttention::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                           SublayerWrite write) const {
  const Tensor& h = in.h();
  const int64_t t = h.dim(0), heads = options_.num_heads, nkv = options_.num_kv_heads, hd = options_.head_dim;
  const Tensor k_rows = as_rows(ctx.kv_cache->k(ctx.kv_layer)), v_rows = as_rows(ctx.kv_cache->v(ctx.kv_layer));
  Tensor packed = ctx.temp_f32({t, heads, 2 * hd}), q = ctx.temp_f32({t, heads, hd}), gate = ctx.temp_f32({t, heads, hd});
  Tensor k = ctx.temp_f32({t, nkv, hd}), v = ctx.temp_f32({t, nkv, hd});
  ops::linear(h, q_proj_, Tensor(), packed.reshape({t, heads * 2 * hd}));
  ops::split_halves(packed, q, gate);
  ops::linear(h, k_proj_, Tensor(), k.reshape({t, nkv * hd}));
  ops::linear(h, v_proj_, Tensor(), v.reshape({t, nkv * hd}));
  q_norm_.apply(q.reshape({t * heads, hd}), q.reshape({t * heads, hd}));
  k_norm_.apply(k.reshape({t * nkv, hd}), k.reshape({t * nkv, hd}));
  ops::rope(q, k, step.device().positions, inv_freq_,
            {.rotary_dim = options_.rope.rotary_dim, .attention_scaling = options_.rope.attention_scaling});
  ops::store_row_part(k.reshape({t, nkv * hd}), step.device().slot_mapping, 0, k_rows);
  ops::store_row_part(v.reshape({t, nkv * hd}), step.device().slot_mapping, 0, v_rows);
  const Tensor selected = select_blocks(step, h, k_rows, v_rows, ctx);
  Tensor attn = ctx.temp_f32({t, heads, hd});
  ops::block_sparse_attention(q, k_rows, v_rows, attention_metadata(step),
                              {.num_kv_heads = nkv, .head_dim = hd, .block_size = step.block_size(),
                               .rate = qsa_.compress_ratio, .scale = 1.0f / std::sqrt(static_cast<float>(hd)),
                               .selected = selected},
                              attn);
  ops::sigmoid_gate(attn, gate);
  const Tensor attn_rows = ctx.as_activations(attn.reshape({t, heads * hd}));
  if (ctx.tensor_parallel != nullptr) {  // this rank's heads' share of o_proj, summed over ranks
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(attn_rows, o_proj_, Tensor(), partial);
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(attn_rows, o_proj_, Tensor(), out, {.accumulate = write == SublayerWrite::kAdd});
}

}  // namespace strata
