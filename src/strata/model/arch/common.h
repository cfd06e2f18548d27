// Pieces most architectures share: the embedding / final norm / lm_head parts, and the
// dense Llama-style decoder that llama, qwen2 and qwen3 configure differently.
#pragma once

#include "strata/model/layers/attention.h"
#include "strata/model/layers/norm.h"
#include "strata/model/model.h"
#include "strata/model/model_weights.h"

namespace strata {

// model.embed_tokens, model.norm and lm_head (the embedding when tie_word_embeddings).
Model::Parts decoder_parts(const ModelConfig& config, const ModelWeights& weights,
                           bool norm_unit_offset = false);

RmsNorm rms_norm_weight(const WeightScope& w, const std::string& name, const ModelConfig& config,
                        bool unit_offset = false);

struct DenseDecoderOptions {
  bool qk_norm = false;
  bool qkv_bias = false;
};

// Attention + gated MLP blocks under model.layers.N, HF Llama naming.
std::unique_ptr<Model> build_dense_decoder(const ModelConfig& config, const ModelWeights& weights,
                                           const DenseDecoderOptions& options);

}  // namespace strata
