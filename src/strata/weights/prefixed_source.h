// PrefixedWeightSource: a WeightSource over another whose tensor names lack the prefix the
// architecture files name. A bare `Qwen3Model` saved by sentence-transformers (as embedding
// checkpoints ship) stores `layers.0...` and `embed_tokens.weight` where `*ForCausalLM`
// stores `model.layers.0...`; names outside the prefix (`score.weight`) pass through.
#pragma once

#include <memory>
#include <string>

#include "strata/weights/weight_source.h"

namespace strata {

// Whether a checkpoint's names lack the decoder's `model.` prefix: no name starts with it, and
// the embedding table is there without it.
bool lacks_model_prefix(const WeightSource& source);

class PrefixedWeightSource final : public WeightSource {
 public:
  PrefixedWeightSource(std::unique_ptr<WeightSource> inner, std::string prefix);

  const WeightInfo* find(std::string_view name) const override;
  std::vector<std::string> names() const override;
  std::string description() const override { return inner_->description(); }

 private:
  std::unique_ptr<WeightSource> inner_;
  std::string prefix_;  // "model."
};

}  // namespace strata
