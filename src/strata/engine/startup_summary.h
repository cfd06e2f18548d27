// The lines `strata serve` prints once start-up is done: what the weights, the KV cache, the
// SSM state pool and the captured CUDA graphs came to. Every figure is read from the object
// that owns it (ModelWeights, the runner's block pool and SSM pool, its graphs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/engine/model_runner.h"
#include "strata/model/model_weights.h"

namespace strata {

struct StartupFacts {
  const ModelWeights* weights = nullptr;
  ModelRunner* runner = nullptr;
  int64_t model_context_tokens = 0;  // config.json's max_position_embeddings
  int64_t max_model_len = 0;         // the engine's (equal to the above unless capped)
  // A draft model's, an EAGLE-3 head's, or a split target's MTP module's (else null: MTP shares the target's).
  const ModelWeights* draft_weights = nullptr;
  ModelRunner* draft_runner = nullptr;
};

std::vector<std::string> startup_summary(const StartupFacts& facts);

}  // namespace strata
