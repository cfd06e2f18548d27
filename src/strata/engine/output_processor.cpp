#include "strata/engine/output_processor.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {
namespace {

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

bool contains(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

OutputProcessor::OutputProcessor(OutputProcessorParts parts) : parts_(std::move(parts)) {}

SequenceEnd OutputProcessor::append(Sequence& seq, int32_t position, const SampleResult& sample) {
  RequestState& request = *seq.request;
  const GenerationRequest& params = request.request;
  const int32_t token = sample.token_id;
  STRATA_CHECK(seq.token_ids.at(position) == kPendingToken);
  seq.token_ids[position] = token;
  const int32_t num_outputs = position + 1 - seq.num_prompt_tokens;  // this one included
  ++request.num_generated_tokens;
  record_token_times(seq, num_outputs);
  ChoiceDelta delta{.index = seq.choice_index, .token_ids = {token}};
  if (params.sampling.logprobs >= 0) delta.logprobs.push_back(sample);
  // The end-of-sequence token ends the text without adding to it (as in vLLM): with
  // skip_special_tokens off, as tool-call parsers need, it would otherwise show as "</s>".
  const bool eos = contains(parts_.eos_token_ids, token) && !params.ignore_eos;
  const StopChecker::Result text = seq.stop_checker->push(eos ? std::string() : seq.detokenizer->push(token));
  delta.text = text.text;
  request.pending.deltas.push_back(std::move(delta));
  touched_.push_back(seq.request);
  if (text.stop) return {FinishReason::kStop, text.stop};
  if (ends_constrained(seq, token)) return {FinishReason::kStop};
  if (eos || contains(params.stop_token_ids, token))
    return {FinishReason::kStop};
  if (num_outputs >= params.max_tokens || position + 1 >= parts_.max_model_len) return {FinishReason::kLength};
  return {};
}

// A constrained output ends with its JSON value or last tool call (the mask allowed only
// valid tokens), or at an end-of-sequence token where it may end, ignore_eos or not.
bool OutputProcessor::ends_constrained(Sequence& seq, int32_t token) {
  if (seq.constraint == nullptr) return false;
  if (seq.constraint->can_end() && contains(parts_.eos_token_ids, token)) return true;
  return !seq.constraint->feed(mask().token_text(token)) || seq.constraint->done();
}

const JsonTokenMask& OutputProcessor::mask() {
  if (!mask_) mask_ = std::make_unique<JsonTokenMask>(parts_.tokenizer);
  return *mask_;
}

void OutputProcessor::record_token_times(Sequence& seq, int32_t num_outputs) {
  const Clock::time_point now = Clock::now();
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    ++s.generation_tokens_total;
    if (num_outputs == 1) {
      if (seq.choice_index == 0) s.time_to_first_token.observe(seconds_between(seq.request->arrival, now));
    } else {
      s.inter_token_latency.observe(seconds_between(seq.last_token_time, now));
    }
  });
  if (num_outputs == 1) seq.first_token_time = now;
  seq.last_token_time = now;
}

// vLLM's request_time_per_output_token: a choice's decode time over its tokens after the first.
void OutputProcessor::record_time_per_output_token(const Sequence& seq, FinishReason reason) {
  const int32_t num_outputs = seq.num_output_tokens() - seq.num_pending_tokens;
  if ((reason != FinishReason::kStop && reason != FinishReason::kLength) || num_outputs < 1) return;
  const double seconds =
      num_outputs > 1 ? seconds_between(seq.first_token_time, seq.last_token_time) / (num_outputs - 1) : 0.0;
  parts_.stats.update([&](EngineStatsSnapshot& s) { s.request_time_per_output_token.observe(seconds); });
}

void OutputProcessor::finish(Sequence& seq, FinishReason reason, std::optional<std::string> stop_reason) {
  RequestState& request = *seq.request;
  ChoiceDelta delta{.index = seq.choice_index, .finish_reason = reason, .stop_reason = std::move(stop_reason)};
  if (reason != FinishReason::kStop || !delta.stop_reason)  // a stop string drops the held tail
    delta.text = seq.stop_checker->flush() + seq.detokenizer->finish();
  request.pending.deltas.push_back(std::move(delta));
  touched_.push_back(seq.request);
  record_time_per_output_token(seq, reason);
  ++request.num_finished_choices;
  // Choice 0 ended before its prompt was done (a cancel, an error): the choices that would
  // have forked off it end with it, or the request would never finish.
  if (!request.forked) {
    request.forked = true;
    for (int32_t c = 1; c < request.request.n; ++c, ++request.num_finished_choices)
      request.pending.deltas.push_back({.index = c, .finish_reason = reason});
  }
  if (request.num_finished_choices == request.request.n) complete_request(request);
}

void OutputProcessor::complete_request(RequestState& request) {
  request.pending.finished = true;
  request.pending.error = request.error;
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    s.prefix_cache_queries_total += request.num_prefix_queries;
    s.prefix_cache_hits_total += request.num_prefix_hits;
    s.cached_prompt_tokens.observe(request.num_cached_tokens);
    if (!request.error.empty()) {
      ++s.requests_failed_total;
    } else if (request.cancelled) {
      ++s.requests_cancelled_total;
    } else {
      ++s.requests_finished_total;
      s.e2e_latency.observe(seconds_between(request.arrival, Clock::now()));
    }
  });
}

std::vector<uint32_t> OutputProcessor::allowed_tokens(const Sequence& seq) {
  if (seq.constraint == nullptr) return {};
  std::vector<uint32_t> bits = seq.constraint->allowed(mask());
  if (seq.constraint->can_end())
    for (int32_t id : parts_.eos_token_ids)
      if (id >= 0 && static_cast<size_t>(id / 32) < bits.size()) bits[id / 32] |= 1u << (id % 32);
  return bits;
}

void OutputProcessor::add_prompt_logprobs(Sequence& seq, std::vector<PromptLogprob> entries) {
  if (entries.empty()) return;
  RequestState& request = *seq.request;
  request.num_prompt_logprobs += static_cast<int32_t>(entries.size());
  for (PromptLogprob& entry : entries) request.pending.prompt_logprobs.push_back(std::move(entry));
  touched_.push_back(seq.request);
}

void OutputProcessor::set_pooled(Sequence& seq, std::vector<float> pooled) {
  seq.request->pending.pooled = std::move(pooled);
  touched_.push_back(seq.request);
}

std::vector<std::shared_ptr<RequestState>> OutputProcessor::publish() {
  std::vector<std::shared_ptr<RequestState>> finished;
  for (const auto& request : touched_) {
    if (request->pending.deltas.empty() && request->pending.prompt_logprobs.empty() && !request->pending.finished)
      continue;
    RequestUpdate update = std::move(request->pending);
    request->pending = {};
    update.num_prompt_tokens = static_cast<int32_t>(request->request.prompt_ids.size());
    update.num_cached_tokens = request->num_cached_tokens;
    update.num_generated_tokens = request->num_generated_tokens;
    if (update.finished) finished.push_back(request);
    request->stream->push(std::move(update));
  }
  touched_.clear();
  return finished;
}

}  // namespace strata
