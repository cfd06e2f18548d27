// ChoiceOutput: one choice of a non-streamed response, assembled from its deltas.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "strata/engine/request.h"
#include "strata/server/generation_run.h"
#include "strata/server/http_reply.h"

namespace strata::server {

struct ChoiceOutput {
  std::string text;
  std::vector<int32_t> token_ids;
  std::vector<SampleResult> logprobs;
  FinishReason finish_reason = FinishReason::kNone;
  std::optional<std::string> stop_reason;
};

// Reads the run to its end, or until the client is gone (the run is then cancelled and
// what arrived so far returned, for nobody). A 500 ApiError when the engine failed it.
std::vector<ChoiceOutput> collect_choices(GenerationRun& run, const ClientWatch& client);

}  // namespace strata::server
