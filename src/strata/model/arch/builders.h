// Builders of every architecture, each defined in its own file of this folder.
#pragma once

#include "strata/model/registry.h"

namespace strata {

std::unique_ptr<Model> build_llama(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen2(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_moe(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_mixtral(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_next(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_5(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_5_moe(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_mamba2(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_nemotron_h(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_gemma3_text(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_gpt_oss(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_deepseek_v3(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_deepseek_v4(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen4_exp(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_bert(const ModelConfig& config, const ModelWeights& weights);
std::unique_ptr<Model> build_modernbert(const ModelConfig& config, const ModelWeights& weights);

// Multi-token-prediction modules of checkpoints that carry them (speculative method mtp).
std::unique_ptr<Model> build_qwen3_next_mtp(const Model& target, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_5_mtp(const Model& target, const ModelWeights& weights);
std::unique_ptr<Model> build_qwen3_5_moe_mtp(const Model& target, const ModelWeights& weights);

// An EAGLE-3 head (speculative method eagle3) of config `head` for `target`, whose embedding it
// shares unless the head has its own. Throws an Error when the head does not fit the target.
std::unique_ptr<Model> build_eagle3_head(const ModelConfig& head, const ModelWeights& weights, const Model& target);

}  // namespace strata
