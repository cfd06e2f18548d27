#include "strata/engine/batch_generate.h"

#include <memory>

#include "strata/core/error.h"

namespace strata {
namespace {

constexpr std::chrono::milliseconds kPollInterval{100};

void cancel_all(Engine& engine, const std::vector<std::shared_ptr<RequestStream>>& streams) {
  for (const auto& stream : streams) engine.cancel(stream->request_id());
}

// Waits for one request to finish, folding its updates in as they come.
RequestOutput wait_for(RequestStream& stream, int32_t n, const BatchGenerateOptions& options, bool& interrupted) {
  using Clock = std::chrono::steady_clock;
  RequestOutput output;
  output.choices.resize(n);
  Clock::time_point next_check = Clock::now() + kPollInterval;
  while (!output.finished) {
    if (std::optional<RequestUpdate> update = stream.pop(kPollInterval)) output.add(*update);
    if (!options.interrupted || Clock::now() < next_check) continue;
    if (options.interrupted()) {
      interrupted = true;
      break;
    }
    next_check = Clock::now() + kPollInterval;
  }
  return output;
}

}  // namespace

void RequestOutput::add(const RequestUpdate& update) {
  for (const ChoiceDelta& delta : update.deltas) {
    if (delta.index >= static_cast<int32_t>(choices.size())) choices.resize(delta.index + 1);
    ChoiceOutput& choice = choices[delta.index];
    choice.text += delta.text;
    choice.token_ids.insert(choice.token_ids.end(), delta.token_ids.begin(), delta.token_ids.end());
    choice.logprobs.insert(choice.logprobs.end(), delta.logprobs.begin(), delta.logprobs.end());
    if (delta.finish_reason != FinishReason::kNone) {
      choice.finish_reason = delta.finish_reason;
      choice.stop_reason = delta.stop_reason;
    }
  }
  prompt_logprobs.insert(prompt_logprobs.end(), update.prompt_logprobs.begin(), update.prompt_logprobs.end());
  if (!update.pooled.empty()) pooled = update.pooled;
  num_prompt_tokens = update.num_prompt_tokens;
  num_cached_tokens = update.num_cached_tokens;
  if (update.finished) {
    finished = true;
    error = update.error;
  }
}

std::vector<RequestOutput> generate_batch(Engine& engine, std::vector<GenerationRequest> requests,
                                          const BatchGenerateOptions& options) {
  std::vector<std::shared_ptr<RequestStream>> streams;
  std::vector<int32_t> num_choices;
  streams.reserve(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    num_choices.push_back(requests[i].n);
    try {
      streams.push_back(engine.submit(std::move(requests[i])));
    } catch (const Error& e) {
      cancel_all(engine, streams);
      fail("prompt {} of {}: {}", i, requests.size(), e.what());
    }
  }
  // Read in order: a later request's updates wait in its own stream meanwhile.
  std::vector<RequestOutput> outputs;
  outputs.reserve(streams.size());
  bool interrupted = false;
  for (size_t i = 0; i < streams.size() && !interrupted; ++i)
    outputs.push_back(wait_for(*streams[i], num_choices[i], options, interrupted));
  if (interrupted) {
    cancel_all(engine, streams);
    fail("generation interrupted; the batch's {} requests were cancelled", streams.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].error.empty()) fail("prompt {} of {} failed: {}", i, outputs.size(), outputs[i].error);
  return outputs;
}

}  // namespace strata
