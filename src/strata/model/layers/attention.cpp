#include "strata/model/layers/attention.h"

#include <cmath>
#include <cstring>

#include "strata/core/error.h"
#include "strata/lora/lora_set.h"
#include "strata/model/layers/normed_input.h"
#include "strata/model/layers/row_parallel.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/linear.h"
#include "strata/ops/paged_attention.h"
#include "strata/ops/prepare_qkv.h"

namespace strata {

AttentionOptions attention_options(const ModelConfig& config) {
  AttentionOptions o;
  o.hidden_size = config.hidden_size;
  o.num_heads = config.num_attention_heads;
  o.num_kv_heads = config.num_key_value_heads;
  o.head_dim = config.head_dim;
  o.qkv_bias = config.attention_bias;
  o.o_bias = config.attention_bias;
  o.rms_norm_eps = static_cast<float>(config.rms_norm_eps);
  o.rope = ops::rope_frequencies(config.rope, config.head_dim, config.max_position_embeddings,
                                  config.dtype);
  return o;
}

Tensor rope_inv_freq(const ops::RopeTable& rope, Backend& backend) {
  const Tensor inv = Tensor::view(const_cast<float*>(rope.inv_freq.data()), DType::kF32,
                                  {static_cast<int64_t>(rope.inv_freq.size())});
  if (!backend.device().is_cpu()) return backend.from_host(inv);
  Tensor out = Tensor::host(DType::kF32, inv.shape());
  std::memcpy(out.data(), inv.data(), inv.nbytes());
  return out;
}

void Attention::load_projections(const AttentionOptions& o, const WeightScope& w) {
  const int64_t q_out = o.num_heads * o.head_dim * (o.output_gate ? 2 : 1);
  const int64_t kv_out = o.num_kv_heads * o.head_dim;
  const int64_t in = o.input_size > 0 ? o.input_size : o.hidden_size;
  if (!o.names.qkv.empty()) {
    STRATA_CHECK(!o.output_gate && !o.rope.mrope.enabled());
    qkv_proj_ = w.get(o.names.qkv + ".weight", {q_out + 2 * kv_out, in});
    if (o.qkv_bias) qkv_bias_ = w.get(o.names.qkv + ".bias", {q_out + 2 * kv_out});
    return;
  }
  if (!o.output_gate && !o.rope.mrope.enabled()) {  // prepare_qkv rotates by 1-D positions only
    qkv_proj_ = w.fused_rows({o.names.q + ".weight", o.names.k + ".weight", o.names.v + ".weight"},
                             {{q_out, in}, {kv_out, in}, {kv_out, in}});
    if (qkv_proj_.defined() && o.qkv_bias)
      qkv_bias_ = w.fused_rows({o.names.q + ".bias", o.names.k + ".bias", o.names.v + ".bias"},
                               {{q_out}, {kv_out}, {kv_out}});
    if (qkv_proj_.defined() && (!o.qkv_bias || qkv_bias_.defined())) return;
    qkv_proj_ = qkv_bias_ = Tensor();
  }
  // Under tensor parallelism each rank keeps its heads' rows (a gated q's rows are per head).
  const auto [kv_begin, kv_end] = kv_head_range(w.shard(), o.num_kv_heads);
  const int64_t kv_rows_begin = kv_begin * o.head_dim, kv_rows_end = kv_end * o.head_dim;
  q_proj_ = w.row_shard(o.names.q + ".weight", {q_out, in}, "num_attention_heads");
  k_proj_ = w.row_range(o.names.k + ".weight", {kv_out, in}, kv_rows_begin, kv_rows_end);
  v_proj_ = w.row_range(o.names.v + ".weight", {kv_out, in}, kv_rows_begin, kv_rows_end);
  if (o.qkv_bias) {
    q_bias_ = w.row_shard(o.names.q + ".bias", {q_out}, "num_attention_heads");
    k_bias_ = w.row_range(o.names.k + ".bias", {kv_out}, kv_rows_begin, kv_rows_end);
    v_bias_ = w.row_range(o.names.v + ".bias", {kv_out}, kv_rows_begin, kv_rows_end);
  }
}

std::pair<int64_t, int64_t> kv_head_range(const TensorShard& shard, int64_t num_kv_heads) {
  if (shard.size <= num_kv_heads || shard.size % num_kv_heads != 0) return shard.range(num_kv_heads, "num_key_value_heads");
  const int64_t head = shard.rank / (shard.size / num_kv_heads);
  return {head, head + 1};
}

AttentionOptions local_heads(const AttentionOptions& options, const TensorShard& shard) {
  AttentionOptions local = options;
  if (shard.size == 1) return local;
  const auto [q_begin, q_end] = shard.range(options.num_heads, "num_attention_heads");
  const auto [kv_begin, kv_end] = kv_head_range(shard, options.num_kv_heads);
  local.num_heads = q_end - q_begin;
  local.num_kv_heads = kv_end - kv_begin;
  return local;
}

Attention::Attention(const AttentionOptions& options, const WeightScope& w)
    : options_(local_heads(options, w.shard())) {
  ops::check_paged_attention_supported(w.device(), options.head_dim, w.prefix());
  const int64_t attn_out = options.num_heads * options.head_dim;
  const AttentionWeightNames& names = options.names;
  load_projections(options, w);
  o_proj_ = w.column_shard(names.o + ".weight", {options.hidden_size, attn_out}, "num_attention_heads * head_dim");
  if (options.o_bias) o_bias_ = w.get(names.o + ".bias", {options.hidden_size});
  if (options.qk_norm) {
    const ops::RmsNormParams p{.eps = options.rms_norm_eps, .unit_offset = options.norm_unit_offset};
    q_norm_ = {w.get("q_norm.weight", {options.head_dim}), p};
    k_norm_ = {w.get("k_norm.weight", {options.head_dim}), p};
  }
  if (options.rope.rotary_dim > 0) inv_freq_ = rope_inv_freq(options.rope, w.weights().backend());  // none: BERT
  if (options.sinks) {  // one per query head: this rank's
    const auto [begin, end] = w.shard().range(options.num_heads, "num_attention_heads");
    sinks_ = w.get_f32("sinks", {options.num_heads}).slice_rows(begin, end);
  }
}

void Attention::forward_fused_qkv(const StepBatch& step, NormedInput& in, const Tensor& q,
                                  ForwardContext& ctx) const {
  Tensor qkv = ctx.temp({in.rows(), qkv_proj_.dim(0)});
  in.linear(qkv_proj_, qkv_bias_, qkv);
  const Tensor& h = in.h();
  const int64_t q_out = options_.num_heads * options_.head_dim, kv_out = options_.num_kv_heads * options_.head_dim;
  apply_lora(ctx, LoraModule::kQ, h, qkv, 0);
  apply_lora(ctx, LoraModule::kK, h, qkv, q_out);
  apply_lora(ctx, LoraModule::kV, h, qkv, q_out + kv_out);
  const StepTensors& meta = step.device();
  ops::prepare_qkv({.qkv = qkv, .q_norm = q_norm_.weight, .k_norm = k_norm_.weight, .positions = meta.positions,
                    .inv_freq = inv_freq_, .slot_mapping = meta.slot_mapping,
                    .k_cache = ctx.kv_cache->k(ctx.kv_layer), .v_cache = ctx.kv_cache->v(ctx.kv_layer), .q_out = q},
                   {.rotary_dim = options_.rope.rotary_dim, .attention_scaling = options_.rope.attention_scaling,
                    .norm_eps = q_norm_.params.eps, .norm_unit_offset = q_norm_.params.unit_offset});
}

void Attention::forward(const StepBatch& step, NormedInput& in, const Tensor& out, ForwardContext& ctx,
                        SublayerWrite write) const {
  const int64_t t = in.rows(), nh = options_.num_heads, nkv = options_.num_kv_heads;
  const int64_t hd = options_.head_dim;
  const StepTensors& meta = step.device();
  const Tensor& k_cache = ctx.kv_cache->k(ctx.kv_layer);
  const Tensor& v_cache = ctx.kv_cache->v(ctx.kv_layer);
  Tensor q, gate;
  if (qkv_proj_.defined()) {
    q = ctx.temp({t, nh, hd});
    forward_fused_qkv(step, in, q, ctx);
  } else {
    const Tensor& h = in.h();
    Tensor q_full = ctx.temp({t, q_proj_.dim(0)});
    Tensor k = ctx.temp({t, nkv, hd});
    Tensor v = ctx.temp({t, nkv, hd});
    ops::linear(h, q_proj_, q_bias_, q_full);
    ops::linear(h, k_proj_, k_bias_, k.reshape({t, nkv * hd}));
    ops::linear(h, v_proj_, v_bias_, v.reshape({t, nkv * hd}));
    apply_lora(ctx, LoraModule::kQ, h, q_full);
    apply_lora(ctx, LoraModule::kK, h, k.reshape({t, nkv * hd}));
    apply_lora(ctx, LoraModule::kV, h, v.reshape({t, nkv * hd}));
    q = q_full.reshape({t, nh, q_full.dim(1) / nh});
    if (options_.output_gate) {
      Tensor query = ctx.temp({t, nh, hd});
      gate = ctx.temp({t, nh, hd});
      ops::split_halves(q, query, gate);
      q = query;
    }
    if (options_.qk_norm) {
      q_norm_.apply(q.reshape({t * nh, hd}), q.reshape({t * nh, hd}));
      k_norm_.apply(k.reshape({t * nkv, hd}), k.reshape({t * nkv, hd}));
    }
    // A step with image tokens carries three position streams; otherwise they are all equal.
    const bool mrope = options_.rope.mrope.enabled() && meta.mrope_positions.defined();
    if (options_.rope.rotary_dim > 0)
      ops::rope(q, k, mrope ? meta.mrope_positions : meta.positions, inv_freq_,
                {.rotary_dim = options_.rope.rotary_dim, .attention_scaling = options_.rope.attention_scaling,
                 .mrope = options_.rope.mrope});
    ops::store_kv(k, v, meta.slot_mapping, k_cache, v_cache);
  }
  Tensor attn = ctx.temp({t, nh, hd});
  const ops::AttentionMetadata attn_meta{.cu_seqlens = meta.cu_seqlens, .kv_lens = meta.kv_lens,
                                         .block_tables = meta.block_tables,
                                         .num_rows = step.num_rows(), .max_q_len = step.max_q_len(),
                                         .max_kv_len = step.max_kv_len()};
  const float scale = options_.scale > 0 ? options_.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  ops::paged_attention(q, k_cache, v_cache, attn_meta,
                       {.scale = scale, .sliding_window = options_.sliding_window, .sinks = sinks_,
                        .causal = options_.causal},
                       attn);
  if (options_.output_gate) ops::sigmoid_gate(attn, gate);
  if (ctx.tensor_parallel != nullptr) {
    Tensor partial = ctx.temp({t, options_.hidden_size});
    ops::linear(attn.reshape({t, nh * hd}), o_proj_, bias_on_first_rank(o_bias_, ctx), partial);
    apply_lora(ctx, LoraModule::kO, attn.reshape({t, nh * hd}), partial);  // this rank's heads' share
    finish_row_parallel(partial, out, write, ctx);
    return;
  }
  ops::linear(attn.reshape({t, nh * hd}), o_proj_, o_bias_, out, {.accumulate = write == SublayerWrite::kAdd});
  apply_lora(ctx, LoraModule::kO, attn.reshape({t, nh * hd}), out);
}

}  // namespace strata
