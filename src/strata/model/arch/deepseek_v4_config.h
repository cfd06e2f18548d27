// DeepSeek-V4's configuration as the layers need it: each layer's attention kind (sliding, CSA,
// HCA) and feed-forward routing (hash or learned), the two rotary tables (`main` for sliding
// layers, `compress` with its YaRN for CSA / HCA layers, their compressors and the indexer), and
// the layout of a token's cache row per layer kind (decision 0019). Read once, validated here.
#pragma once

#include <vector>

#include "strata/core/model_config.h"
#include "strata/ops/rope.h"

namespace strata {

enum class DeepseekV4AttentionKind : uint8_t { kSliding, kCompressedSparse, kHeavilyCompressed };

// Where each part of a token's cache row starts (decision 0019); parts a layer kind lacks are
// absent from its width. Order: kv, compressor kv, compressor gate, entry, indexer kv, indexer
// gate, indexer entry.
struct DeepseekV4RowLayout {
  int64_t compressor_kv = 0, compressor_gate = 0, entry = 0;
  int64_t indexer_kv = 0, indexer_gate = 0, indexer_entry = 0;
  int64_t width = 0;
};

struct DeepseekV4LayerPlan {
  DeepseekV4AttentionKind attention = DeepseekV4AttentionKind::kSliding;
  int64_t compress_rate = 0;  // 0 for sliding layers
  bool hash_moe = false;      // routed by tid2eid[token] rather than by score
};

struct DeepseekV4Config {
  std::vector<DeepseekV4LayerPlan> layers;
  int64_t head_dim = 0, rope_dim = 0, q_lora_rank = 0, sliding_window = 0;
  int64_t o_groups = 0, o_lora_rank = 0;
  int64_t index_n_heads = 0, index_head_dim = 0, index_topk = 0;
  int64_t hc_mult = 0, hc_sinkhorn_iters = 0;
  float hc_eps = 1e-6f, swiglu_limit = 0.0f;
  ops::RopeTable main_rope, compress_rope;  // over rope_dim, rounded to the checkpoint's dtype

  // Throws an Error naming the config.json field and the accepted values.
  static DeepseekV4Config read(const ModelConfig& config);
  DeepseekV4RowLayout row_layout(const DeepseekV4LayerPlan& layer) const;
  // The widest row over the layers: the KV cache's entry width.
  int64_t max_row_width() const;
};

}  // namespace strata
