#include "strata/engine/request.h"

namespace strata {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "abort";
    case FinishReason::kError: return "error";
    case FinishReason::kNone: break;
  }
  return "";
}

void RequestStream::push(RequestUpdate update) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = finished_ || update.finished;
    queue_.push_back(std::move(update));
  }
  ready_.notify_one();
}

std::optional<RequestUpdate> RequestStream::pop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return std::nullopt;
  RequestUpdate merged = std::move(queue_.front());
  queue_.pop_front();
  while (!queue_.empty()) {
    RequestUpdate& next = queue_.front();
    for (ChoiceDelta& d : next.deltas) merged.deltas.push_back(std::move(d));
    for (PromptLogprob& p : next.prompt_logprobs) merged.prompt_logprobs.push_back(std::move(p));
    if (!next.pooled.empty()) merged.pooled = std::move(next.pooled);
    merged.finished = merged.finished || next.finished;
    if (!next.error.empty()) merged.error = next.error;
    merged.num_prompt_tokens = next.num_prompt_tokens;
    merged.num_cached_tokens = next.num_cached_tokens;
    merged.num_generated_tokens = next.num_generated_tokens;
    queue_.pop_front();
  }
  return merged;
}

bool RequestStream::finished() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

}  // namespace strata
