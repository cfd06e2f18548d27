// Which runner a checkpoint gets and how a pooling model pools, by vLLM's rules: the flags
// (--runner, --task, --pooler-config) first, then the checkpoint's sentence-transformers files
// (modules.json, the Pooling module's config.json, Dense modules, a Normalize module), then config.json
// (architectures ending in `Model` or `ForSequenceClassification`, id2label, is_matryoshka).
#pragma once

#include <optional>
#include <string>

#include "strata/core/model_config.h"

namespace strata {

struct PoolingFlags {
  std::string runner = "auto";  // auto, generate, pooling
  std::string task;             // vLLM's older --task: embed, classify, score, generate; empty: none
  std::string pooler_config;    // JSON {"pooling_type": "LAST|MEAN|CLS", "normalize": bool, "activation": bool}
};

// nullopt: a generative model. Throws an Error naming the flag or file for what it cannot serve
// (max pooling, a Dense module whose sizes do not chain, a contradicting --task).
std::optional<PoolerConfig> resolve_pooler_config(const std::string& model_path, const ModelConfig& config,
                                                  const PoolingFlags& flags);

// "LAST", "MEAN", "CLS" (any case); nullopt for anything else.
std::optional<PoolingType> parse_pooling_type(const std::string& name);
const char* pooling_type_name(PoolingType type);  // "LAST", "MEAN", "CLS"
// "embed" (hidden states), "classify" (a classifier) or "generate".
const char* model_task_name(const ModelConfig& config);

}  // namespace strata
