#include "strata/server/generation_run.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/openai_objects.h"

namespace strata::server {

GenerationRun::GenerationRun(GenerationService& service, std::vector<GenerationRequest> requests)
    : service_(service) {
  STRATA_CHECK(!requests.empty());
  n_ = requests.front().n;
  STRATA_CHECK(static_cast<int64_t>(requests.size()) * n_ <= kMaxSequencesPerRequest);  // read_completion bounds it
  for (GenerationRequest& r : requests) {
    prompts_.push_back(r.prompt_ids);
    try {
      streams_.push_back(service_.submit(std::move(r)));
    } catch (const Error& e) {
      cancel();
      throw bad_request(e.what());
    }
    progress_.push_back({.num_prompt_tokens = static_cast<int64_t>(prompts_.back().size())});
  }
}

GenerationRun::~GenerationRun() { cancel(); }

void GenerationRun::cancel() {
  for (size_t i = 0; i < streams_.size(); ++i)
    if (!progress_[i].finished) service_.cancel(streams_[i]->request_id());
}

bool GenerationRun::take(size_t i, std::chrono::milliseconds timeout, const DeltaFn& on_delta) {
  std::optional<RequestUpdate> update = streams_[i]->pop(timeout);
  if (!update) return false;
  Progress& p = progress_[i];
  if (update->num_prompt_tokens > 0) p.num_prompt_tokens = update->num_prompt_tokens;
  p.num_cached_tokens = std::max<int64_t>(p.num_cached_tokens, update->num_cached_tokens);
  p.num_generated_tokens = std::max<int64_t>(p.num_generated_tokens, update->num_generated_tokens);
  if (!update->error.empty() && error_.empty()) error_ = update->error;
  for (PromptLogprob& entry : update->prompt_logprobs) p.prompt_logprobs.push_back(std::move(entry));
  for (ChoiceDelta& d : update->deltas) on_delta(static_cast<int32_t>(i) * n_ + d.index, d);
  p.finished = p.finished || update->finished;
  return true;
}

bool GenerationRun::poll(std::chrono::milliseconds timeout, const DeltaFn& on_delta) {
  std::vector<size_t> open;
  for (size_t i = 0; i < streams_.size(); ++i)
    if (!progress_[i].finished) open.push_back(i);
  if (open.empty()) return false;
  if (open.size() == 1) {
    take(open[0], timeout, on_delta);
  } else {
    // Several prompts: a short wait on each in turn, so none starves the others.
    const auto slice = std::max(std::chrono::milliseconds(1), timeout / static_cast<int64_t>(open.size()));
    bool any = false;
    for (size_t i : open) any = take(i, any ? std::chrono::milliseconds(0) : slice, on_delta) || any;
  }
  return std::any_of(progress_.begin(), progress_.end(), [](const Progress& p) { return !p.finished; });
}

Usage GenerationRun::usage() const {
  Usage u;
  for (const Progress& p : progress_) {
    u.prompt_tokens += p.num_prompt_tokens;
    u.completion_tokens += p.num_generated_tokens;
    u.cached_tokens += p.num_cached_tokens;
  }
  return u;
}

std::string stream_end(const GenerationRun& run, const Envelope& envelope, const char* object,
                       bool include_usage) {
  std::string out;
  if (!run.error().empty())
    out += sse_event(error_body(ApiError(500, "generation failed: " + run.error(), "server_error")));
  if (include_usage) {
    Json last = envelope_json(envelope, object);
    last["choices"] = Json::array();
    last["usage"] = usage_json(run.usage());
    out += sse_event(last);
  }
  out += kSseDone;
  return out;
}

}  // namespace strata::server
