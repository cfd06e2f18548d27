#include "strata/server/choice_output.h"

#include "strata/server/api_error.h"

namespace strata::server {

std::vector<ChoiceOutput> collect_choices(GenerationRun& run, const ClientWatch& client) {
  std::vector<ChoiceOutput> choices(static_cast<size_t>(run.num_choices()));
  const auto on_delta = [&](int32_t index, ChoiceDelta& d) {
    if (index < 0 || index >= run.num_choices()) return;
    ChoiceOutput& c = choices[static_cast<size_t>(index)];
    c.text += d.text;
    c.token_ids.insert(c.token_ids.end(), d.token_ids.begin(), d.token_ids.end());
    for (SampleResult& s : d.logprobs) c.logprobs.push_back(std::move(s));
    if (d.finish_reason != FinishReason::kNone) {
      c.finish_reason = d.finish_reason;
      c.stop_reason = d.stop_reason;
    }
  };
  // Short waits, so a client that leaves stops its generation within one of them.
  while (run.poll(std::chrono::milliseconds(50), on_delta)) {
    if (client.gone()) {
      run.cancel();
      return choices;
    }
  }
  if (!run.error().empty())
    throw ApiError(500, "generation failed: " + run.error(), "server_error", "", "internal_error");
  return choices;
}

}  // namespace strata::server
