// BERT's input beyond the token embedding: absolute position and token type embeddings, then a
// LayerNorm. Token type 0's row is folded into the position table at load, so a step without
// token types (any single text) reads one table; pair inputs add the other types' offsets.
#pragma once

#include "strata/core/model_config.h"
#include "strata/model/forward_context.h"
#include "strata/model/layers/layer_norm.h"
#include "strata/model/step_batch.h"

namespace strata {

struct EncoderEmbeddings {
  Tensor positions_with_type0;  // [max_position_embeddings, hidden] f32 on the model's device
  Tensor type_offsets;          // [type_vocab_size, hidden] f32: each type's row minus type 0's
  LayerNorm norm;

  bool defined() const { return positions_with_type0.defined(); }
  int64_t num_token_types() const { return defined() ? type_offsets.dim(0) : 0; }
  // x: [T, hidden] token embeddings (activation dtype), completed in place.
  void apply(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
};

// position_embeddings, token_type_embeddings and LayerNorm under `w` (BERT's "embeddings"), the
// tables folded on the host and placed on the model's device in f32.
EncoderEmbeddings load_encoder_embeddings(const ModelConfig& config, const WeightScope& w);

}  // namespace strata
