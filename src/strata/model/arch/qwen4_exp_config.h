// Qwen4-Exp's configuration as its layers need it: which layers are DeltaNet or QSA attention,
// which carry per-layer n-gram embeddings (PLE) and their hash tables (transformers derives the
// multipliers and table sizes from `seed` and `ngram_vocab_size_base`; so do we), the
// hyper-connection streams and the QSA indexer. Read once, validated here.
#pragma once

#include <vector>

#include "strata/core/model_config.h"
#include "strata/ops/gated_rms_norm.h"
#include "strata/ops/per_layer_embedding.h"

namespace strata {

struct Qwen4ExpPleConfig {
  int64_t embed_dim = 0;          // ple_embed_dim
  int64_t conv_kernel = 0;        // ple_conv_kernel_size; the dilation is ngram_size
  int64_t table_rows = 0;         // the joint n-gram table, padded
  int64_t split_parts = 1;        // split_ngram_parts: the checkpoint's shards of the table
  ops::NgramHash hash;            // of this layer
};

struct Qwen4ExpQsaConfig {
  int64_t index_heads = 0, index_head_dim = 0, budget = 0, compress_ratio = 0;
};

struct Qwen4ExpConfig {
  std::vector<bool> full_attention;           // per layer: QSA attention, else DeltaNet
  std::vector<int64_t> ple_index;             // per layer: its index among PLE layers, or -1
  std::vector<Qwen4ExpPleConfig> ple_layers;  // by PLE index
  int64_t hc_count = 0, hc_lowrank = 0;
  Qwen4ExpQsaConfig qsa;
  ops::GateActivation output_gate = ops::GateActivation::kSilu;  // output_gate_type (else hidden_act)

  // Throws an Error naming the config.json field and the accepted values.
  static Qwen4ExpConfig read(const ModelConfig& config);
};

}  // namespace strata
