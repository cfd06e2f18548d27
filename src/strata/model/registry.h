// The one place architecture names (config.json `model_type`) are matched to builders.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strata/model/model.h"
#include "strata/model/model_weights.h"

namespace strata {

using ModelBuilder = std::unique_ptr<Model> (*)(const ModelConfig&, const ModelWeights&);

std::unique_ptr<Model> build_model(const ModelConfig& config, const ModelWeights& weights);
// The multi-token-prediction module of `target`'s checkpoint (speculative method mtp), built whole
// from `weights` (unsplit: ModelWeights::shard().size 1; load_mtp_module gives them). It shares the
// target's embedding and lm_head, or reads them whole when the target's vocabulary is split or the
// target is a pipeline stage (stage 0 holds no LM head). Throws
// an Error for model types without one and for checkpoints that lack its weights.
std::unique_ptr<Model> build_mtp_module(const Model& target, const ModelWeights& weights);
std::vector<std::string> supported_model_types();
// The pooling a model type's embeddings and scores use when no file or flag says: CLS for
// encoders (BERT, ModernBERT: their [CLS] row is trained to stand for the input), LAST for decoders.
PoolingType default_pooling_type(const std::string& model_type);

}  // namespace strata
