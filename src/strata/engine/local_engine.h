// LocalEngine: the serving Engine driven in-process for one caller at a time, so `strata
// generate` and `strata chat` take the server's decode path (CUDA graphs, sampling on the
// device, async scheduling) instead of a slower one of their own. Requests run one by one;
// the engine (and its prefix cache, so a chat's next turn reuses the last) lives on.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "strata/engine/engine.h"

namespace strata {

class LocalEngine {
 public:
  // eos_token_ids end a request unless it sets ignore_eos. The runner and tokenizer (and the
  // draft runner of options.speculative's draft model or MTP module) must outlive this object.
  // Captures the batch-1 decode graph up front, so the first tokens are not timed with the capture.
  LocalEngine(ModelRunner& runner, const text::Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids,
              const EngineOptions& options = single_sequence_options(), ModelRunner* draft_runner = nullptr);
  ~LocalEngine();

  // Calls on_token for each generated id as it arrives (return false to stop early) and
  // returns all of them. One choice (n = 1). Throws strata::Error for a request the engine
  // refuses or fails.
  std::vector<int32_t> generate(GenerationRequest request,
                                const std::function<bool(int32_t)>& on_token = {});

  // One running sequence, the prompt prefilled in chunks of the default token budget.
  static EngineOptions single_sequence_options();

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace strata
