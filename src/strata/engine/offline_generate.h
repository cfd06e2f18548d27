// One sequence generated to completion on a DirectSession, step by step with host sampling:
// the plain reference the engine tests compare batched serving against (`strata generate`
// and `strata chat` run through LocalEngine, the server's path).
#pragma once

#include <functional>
#include <vector>

#include "strata/engine/direct_session.h"
#include "strata/engine/sampler.h"

namespace strata {

struct OfflineGenerateRequest {
  std::vector<int32_t> prompt_ids;
  SamplingParams sampling;
  int32_t max_tokens = 64;
  std::vector<int32_t> stop_token_ids;  // e.g. the model's eos ids
  bool ignore_eos = false;
  int32_t prefill_chunk = 0;            // 0: the whole prompt in one step
};

// Calls on_token for each generated id (return false to stop) and returns all of them.
std::vector<int32_t> generate_offline(ModelRunner& runner, const OfflineGenerateRequest& request,
                                      const std::function<bool(int32_t)>& on_token = {});

}  // namespace strata
