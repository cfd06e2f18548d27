#include "strata/model/layers/deepseek_v4_attention.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "strata/core/error.h"
#include "strata/model/layers/closing_windows.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/model/layers/shard_rows.h"
#include "strata/ops/compressed_kv.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/hyper_connection.h"
#include "strata/ops/linear.h"
#include "strata/ops/moe.h"
#include "strata/ops/rope.h"

namespace strata {
namespace {

// Stored index of each dim of a head laid out [rope (half layout) | nope], from the checkpoint's
// [nope | rope] with interleaved rotary pairs, repeated for `count` heads of `dim`.
std::vector<int64_t> head_order(int64_t dim, int64_t rope, int64_t count) {
  std::vector<int64_t> order;
  for (int64_t h = 0; h < count; ++h) {
    for (int64_t j = 0; j < rope / 2; ++j) order.push_back(h * dim + dim - rope + 2 * j);
    for (int64_t j = 0; j < rope / 2; ++j) order.push_back(h * dim + dim - rope + 2 * j + 1);
    for (int64_t j = 0; j < dim - rope; ++j) order.push_back(h * dim + j);
  }
  return order;
}

// An f32 weight [n] with its entries reordered (on the model's device).
Tensor permuted_f32(const WeightScope& w, const std::string& name, const std::vector<int64_t>& order) {
  return w.weights().columns_f32(w.name(name), {static_cast<int64_t>(order.size())}, order);
}

Tensor device_f32(const std::vector<float>& values, Backend& backend) {
  Tensor t = Tensor::host(DType::kF32, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.data_as<float>());
  return backend.device().is_cpu() ? t : backend.from_host(t);
}

// x: [T, heads, dim] rotated in place on its first rope dims at `positions` [T] i32 (back with `inverse`).
void rotate(const Tensor& x, const Tensor& positions, const Tensor& inv_freq, int64_t rope, ForwardContext& ctx,
            bool inverse = false) {
  Tensor unused = ctx.temp_f32({x.dim(0), 1, x.dim(2)});
  ops::rope(x, unused, positions, inv_freq, {.rotary_dim = rope, .inverse = inverse});
}

}  // namespace

DeepseekV4Attention::Compressor DeepseekV4Attention::load_compressor(const WeightScope& w, int64_t dim,
                                                                     int64_t series) const {
  const int64_t hidden = options_.hidden_size, rate = options_.layer.compress_rate;
  const std::vector<int64_t> rows = head_order(dim, config_.rope_dim, series);
  return {.wkv = w.weights().gathered_rows(w.name("wkv.weight"), {series * dim, hidden}, rows),
          .wgate = w.weights().gathered_rows(w.name("wgate.weight"), {series * dim, hidden}, rows),
          .ape = w.weights().columns_f32(w.name("ape"), {rate, series * dim}, rows),
          .norm = permuted_f32(w.scope("norm"), "weight", head_order(dim, config_.rope_dim, 1)),
          .dim = dim};
}

// Under tensor parallelism a rank takes whole groups of the output projection and their heads.
DeepseekV4Attention::LocalHeads DeepseekV4Attention::local_heads(const DeepseekV4Config& config, int64_t num_heads,
                                                                 const WeightScope& w) {
  const TensorShard& shard = w.shard();
  if (config.o_groups % shard.size != 0)
    fail("{}: --tensor-parallel-size {} does not divide o_groups ({}): each rank takes whole groups of the grouped "
         "output projection (wo_a) with their heads; choose a size that divides o_groups",
         w.prefix(), shard.size, config.o_groups);
  const int64_t groups = config.o_groups / shard.size, heads = num_heads / shard.size;
  return {.first_group = shard.rank * groups, .num_groups = groups, .first_head = shard.rank * heads,
          .num_heads = heads};
}

DeepseekV4Attention::DeepseekV4Attention(const DeepseekV4Config& config, const DeepseekV4AttentionOptions& options,
                                         const WeightScope& w)
    : config_(config), options_(options), local_(local_heads(config, options.num_heads, w)),
      row_(config.row_layout(options.layer)) {
  const int64_t hidden = options.hidden_size, heads = options.num_heads, d = config.head_dim;
  const int64_t q_lora = config.q_lora_rank, r = config.rope_dim;
  const ModelWeights& weights = w.weights();
  options_.num_heads = local_.num_heads;
  wq_a_ = w.get("wq_a.weight", {q_lora, hidden});
  q_norm_ = RmsNorm{w.get("q_norm.weight", {q_lora}), {.eps = options.rms_norm_eps}};
  const std::vector<int64_t> q_rows = head_order(d, r, heads);  // this rank's heads: a contiguous part
  wq_b_ = weights.gathered_rows(w.name("wq_b.weight"), {heads * d, q_lora},
                                {q_rows.begin() + local_.first_head * d,
                                 q_rows.begin() + (local_.first_head + local_.num_heads) * d});
  wkv_ = weights.gathered_rows(w.name("wkv.weight"), {d, hidden}, head_order(d, r, 1));
  kv_norm_ = permuted_f32(w.scope("norm"), "weight", head_order(d, r, 1));
  ones_ = device_f32(std::vector<float>(d, 1.0f), weights.backend());
  sinks_ = weights.columns_f32(w.name("attn_sink"), {heads},
                               index_range(local_.first_head, local_.first_head + local_.num_heads));
  load_output(w, heads);
  const bool sliding = options.layer.attention == DeepseekV4AttentionKind::kSliding;
  const ops::RopeTable& table = sliding ? config.main_rope : config.compress_rope;
  inv_freq_ = device_f32(table.inv_freq, weights.backend());
  compress_inv_freq_ = device_f32(config.compress_rope.inv_freq, weights.backend());
  if (sliding) return;
  const bool sparse = options.layer.attention == DeepseekV4AttentionKind::kCompressedSparse;
  compressor_ = load_compressor(w.scope("compressor"), d, sparse ? 2 : 1);
  if (!sparse) return;
  const WeightScope idx = w.scope("indexer");
  indexer_compressor_ = load_compressor(idx.scope("compressor"), config.index_head_dim, 2);
  indexer_wq_b_ = weights.gathered_rows(idx.name("wq_b.weight"), {config.index_n_heads * config.index_head_dim, q_lora},
                                        head_order(config.index_head_dim, r, config.index_n_heads));
  indexer_weights_ = idx.get("weights_proj.weight", {config.index_n_heads, hidden});
}

// wo_a's rows of this rank's groups only (large in real checkpoints) and wo_b's columns of them.
void DeepseekV4Attention::load_output(const WeightScope& w, int64_t num_heads) {
  const int64_t d = config_.head_dim, groups = config_.o_groups, rank = config_.o_lora_rank;
  const int64_t group_in = num_heads * d / groups;
  const ModelWeights& weights = w.weights();
  const std::pair<int64_t, int64_t> rows{local_.first_group * rank, (local_.first_group + local_.num_groups) * rank};
  wo_a_ = weights.columns_f32(w.name("wo_a.weight"), {groups * rank, group_in},
                              head_order(d, config_.rope_dim, group_in / d), rows)
              .reshape({local_.num_groups, rank, group_in});
  if (!wo_a_.device().is_cpu() && wo_a_.data() != nullptr) {  // the GPU's grouped linear reads bf16
    Tensor bf16 = weights.backend().empty(DType::kBF16, wo_a_.shape());
    ops::convert(wo_a_, bf16);
    wo_a_ = bf16;
  }
  wo_b_ = w.column_shard("wo_b.weight", {options_.hidden_size, groups * rank}, "o_groups * o_lora_rank");
}

// Pools the windows that close in this step into entries, rotates each at its window's position
// and stores it in the row of the window's last token. h: [T, hidden].
void DeepseekV4Attention::compress(const StepBatch& step, const Tensor& h, const Compressor& c, int64_t kv_offset,
                                   int64_t entry_offset, const Tensor& rows, ForwardContext& ctx) const {
  const int64_t t = h.dim(0), width = c.wkv.dim(0), rate = options_.layer.compress_rate;
  Tensor projected = ctx.temp_f32({t, width});
  ops::linear(h, c.wkv, Tensor(), projected);
  ops::store_row_part(projected, step.device().slot_mapping, kv_offset, rows);
  ops::linear(h, c.wgate, Tensor(), projected);
  ops::store_row_part(projected, step.device().slot_mapping, kv_offset + width, rows);
  const bool overlap = width == 2 * c.dim;
  const ClosingWindows windows = closing_windows(step, rate, overlap);
  const int64_t e = windows.count();
  if (e == 0) return;
  const int64_t places = overlap ? 2 * rate : rate;
  Tensor entries = ctx.temp_f32({e, c.dim});
  ops::compress_kv_windows(rows, step_i32(windows.sources, {e, places}, ctx), c.ape, c.norm,
                           {.head_dim = c.dim, .rate = rate, .overlap = overlap, .kv_offset = kv_offset,
                            .gate_offset = kv_offset + width, .eps = options_.rms_norm_eps},
                           entries);
  rotate(entries.reshape({e, 1, c.dim}), step_i32(windows.positions, {e}, ctx), compress_inv_freq_, config_.rope_dim,
         ctx);
  ops::store_row_part(entries, step_i32(windows.entry_slots, {e}, ctx), entry_offset, rows);
}

// The lightning indexer: its own compressed entries, then each query's top index_topk.
// q_latent: [T, q_lora] normed, as activations. Returns [T, index_topk] i32.
Tensor DeepseekV4Attention::select_entries(const StepBatch& step, const Tensor& h, const Tensor& q_latent,
                                           const Tensor& rows, ForwardContext& ctx) const {
  const int64_t t = h.dim(0), heads = config_.index_n_heads, dim = config_.index_head_dim;
  compress(step, h, indexer_compressor_, row_.indexer_kv, row_.indexer_entry, rows, ctx);
  Tensor q = ctx.temp_f32({t, heads, dim});
  ops::linear(q_latent, indexer_wq_b_, Tensor(), q.reshape({t, heads * dim}));
  rotate(q, step.device().positions, compress_inv_freq_, config_.rope_dim, ctx);
  Tensor weights = ctx.temp_f32({t, heads});
  ops::linear(h, indexer_weights_, Tensor(), weights);
  ops::scale(weights, 1.0f / std::sqrt(static_cast<float>(heads)));
  Tensor selected = ctx.workspace.alloc(DType::kI32, {t, config_.index_topk});
  const int64_t rate = options_.layer.compress_rate;
  const Tensor scores = ctx.backend.device().is_cpu()
                            ? Tensor()
                            : ctx.workspace.alloc(DType::kF32, {t, std::max<int64_t>(1, step.max_kv_len() / rate)});
  ops::indexer_top_k(q, weights, rows, attention_metadata(step),
                     {.head_dim = dim, .block_size = step.block_size(), .rate = rate,
                      .entry_offset = row_.indexer_entry, .top_k = config_.index_topk,
                      .scale = 1.0f / std::sqrt(static_cast<float>(dim)), .scores = scores},
                     selected);
  return selected;
}

// out (+)= wo_b(wo_a per group(o)). o: [T, H, d] (this rank's heads); the groups run as experts of
// ops::grouped_linear. Under tensor parallelism each rank's groups give a partial sum over ranks.
void DeepseekV4Attention::project_out(const Tensor& o, const Tensor& out, ForwardContext& ctx,
                                      SublayerWrite write) const {
  const int64_t t = o.dim(0), groups = local_.num_groups, group_in = wo_a_.dim(2), rank = config_.o_lora_rank;
  std::vector<int32_t> by_group(t * groups), by_token(t * groups), offsets(groups + 1);
  for (int64_t g = 0; g < groups; ++g) {
    offsets[g + 1] = static_cast<int32_t>((g + 1) * t);
    for (int64_t i = 0; i < t; ++i) {
      by_group[g * t + i] = static_cast<int32_t>(i * groups + g);
      by_token[i * groups + g] = static_cast<int32_t>(g * t + i);
    }
  }
  Tensor grouped = ctx.temp({groups * t, group_in});
  ops::gather_rows(ctx.as_activations(o).reshape({t * groups, group_in}), step_i32(by_group, {t * groups}, ctx),
                   grouped);
  Tensor low = ctx.temp({groups * t, rank});
  ops::grouped_linear(grouped, wo_a_, step_i32(offsets, {groups + 1}, ctx), low);
  Tensor mixed = ctx.temp({t * groups, rank});
  ops::gather_rows(low, step_i32(by_token, {t * groups}, ctx), mixed);
  const Tensor low_rows = mixed.reshape({t, groups * rank});
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(low_rows, wo_b_, Tensor(), partial);
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(low_rows, wo_b_, Tensor(), out, {.accumulate = write == SublayerWrite::kAdd});
}

void DeepseekV4Attention::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                                  SublayerWrite write) const {
  const Tensor& h = in.h();
  const int64_t t = h.dim(0), heads = options_.num_heads, d = config_.head_dim;
  const Tensor& cache = ctx.kv_cache->k(ctx.kv_layer);  // [blocks, block_size, 1, row width]
  const Tensor rows = cache.reshape({cache.dim(0) * cache.dim(1), cache.dim(3)});
  Tensor q_residual = ctx.temp_f32({t, config_.q_lora_rank});
  ops::linear(h, wq_a_, Tensor(), q_residual);
  q_norm_.apply(q_residual, q_residual);
  const Tensor q_latent = ctx.as_activations(q_residual);  // transformers' q_norm output, bf16 on a GPU
  Tensor q = ctx.temp_f32({t, heads, d});
  ops::linear(q_latent, wq_b_, Tensor(), q.reshape({t, heads * d}));
  ops::rms_norm(q.reshape({t * heads, d}), ones_, q.reshape({t * heads, d}), {.eps = options_.rms_norm_eps});
  Tensor kv = ctx.temp_f32({t, 1, d});
  ops::linear(h, wkv_, Tensor(), kv.reshape({t, d}));
  ops::rms_norm(kv.reshape({t, d}), kv_norm_, kv.reshape({t, d}), {.eps = options_.rms_norm_eps});
  ops::rope(q, kv, step.device().positions, inv_freq_, {.rotary_dim = config_.rope_dim});
  ops::store_row_part(kv.reshape({t, d}), step.device().slot_mapping, 0, rows);
  const bool compressed = options_.layer.attention != DeepseekV4AttentionKind::kSliding;
  if (compressed) compress(step, h, compressor_, row_.compressor_kv, row_.entry, rows, ctx);
  Tensor selected;
  if (options_.layer.attention == DeepseekV4AttentionKind::kCompressedSparse)
    selected = select_entries(step, h, q_latent, rows, ctx);
  Tensor o = ctx.temp_f32({t, heads, d});
  ops::compressed_attention(q, rows, attention_metadata(step),
                            {.head_dim = d, .block_size = step.block_size(), .sliding_window = config_.sliding_window,
                             .rate = compressed ? options_.layer.compress_rate : 0, .entry_offset = row_.entry,
                             .scale = 1.0f / std::sqrt(static_cast<float>(d)), .sinks = sinks_, .selected = selected},
                            o);
  // K = V carries the rotation into the output; rotating back at the query's position removes it.
  rotate(o, step.device().positions, inv_freq_, config_.rope_dim, ctx, /*inverse=*/true);
  project_out(o, out, ctx, write);
}

}  // namespace strata
