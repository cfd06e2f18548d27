// Qwen4-Exp's per-layer embedding (Qwen4ExpTextPLELayer), added to the streams before a block:
// hashed n-gram rows project to a value and a key per stream, the normed streams gate the value,
// a dilated depthwise conv with SiLU adds local context. Its carry (LayerCaps::carry): the n-gram
// history (h_state) and the conv's last (kernel - 1) * dilation inputs (conv_state: the conv runs
// as ops::causal_conv1d with zero taps between the dilated ones). Activations in the backend's
// dtype (f32 on the CPU, bf16 on a GPU), the carry f32.
#pragma once

#include "strata/cache/ssm_layer_shape.h"
#include "strata/model/forward_context.h"
#include "strata/model/model_weights.h"
#include "strata/model/layers/ssm_segments.h"
#include "strata/model/step_batch.h"
#include "strata/ops/per_layer_embedding.h"

namespace strata {

struct PerLayerEmbeddingOptions {
  int64_t num_streams = 0;  // hc_count
  int64_t hidden_size = 0;
  int64_t embed_dim = 0;    // ple_embed_dim: all heads' rows joined
  int64_t conv_kernel = 0;  // ple_conv_kernel_size; dilation = ngram_size
  int64_t table_rows = 0;   // the joint n-gram table
  int64_t split_parts = 1;  // the checkpoint's shards of the table (ngram_embedding.shard_<i>)
  float rms_norm_eps = 1e-6f;
  ops::NgramHash hash;
};

class PerLayerEmbedding {
 public:
  // w: the layer's `ple` scope.
  PerLayerEmbedding(const PerLayerEmbeddingOptions& options, const WeightScope& w);
  SsmLayerShape carry() const;
  // streams: [T, n * hidden] activations, updated in place; the carry is pool layer ctx.carry_layer.
  void add_to(const StepBatch& step, const Tensor& streams, ForwardContext& ctx) const;

 private:
  int64_t width() const { return options_.num_streams * options_.hidden_size; }
  int64_t conv_taps() const { return (options_.conv_kernel - 1) * options_.hash.ngram_size + 1; }
  void add_segment(const SsmSegment& s, const Tensor& streams, ForwardContext& ctx) const;
  void load_table(const WeightScope& w);
  void load_conv(const WeightScope& w);

  PerLayerEmbeddingOptions options_;
  Tensor table_;                         // [table_rows, embed_dim / heads]
  Tensor key_proj_;                      // [n hidden, embed_dim]
  Tensor value_proj_;                    // [hidden, embed_dim]
  Tensor norm_key_, norm_query_, norm_conv_;  // [n hidden] f32
  Tensor conv_weight_;                   // [n hidden, conv_taps] f32 on the device: the dilated taps, zeros between
};

}  // namespace strata
