#include "server/scripted_service_support.h"

#include <algorithm>

namespace strata::server::test {

ScriptedService::~ScriptedService() {
  stop_ = true;
  for (std::thread& t : threads_) t.join();
}

std::shared_ptr<RequestStream> ScriptedService::submit(GenerationRequest request) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto stream = std::make_shared<RequestStream>(next_id_++);
  threads_.emplace_back([this, stream, request, script = script_] { play(*stream, request, script); });
  return stream;
}

void ScriptedService::set_script(std::vector<std::string> texts) {
  std::lock_guard<std::mutex> lock(mutex_);
  script_ = std::move(texts);
}

void ScriptedService::cancel(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  cancelled_.insert(id);
}

bool ScriptedService::was_cancelled(int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_.count(id) > 0;
}

bool ScriptedService::wait_cancelled(int64_t id, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!was_cancelled(id)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

int64_t ScriptedService::num_submitted() {
  std::lock_guard<std::mutex> lock(mutex_);
  return next_id_ - 1;
}

void ScriptedService::play(RequestStream& stream, const GenerationRequest& r, const std::vector<std::string>& script) {
  if (r.prompt_ids[0] == 99) return stream.push({.finished = true, .error = "scripted failure"});
  if (r.prompt_ids[0] == 98) {
    while (!stop_ && !was_cancelled(stream.request_id())) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ChoiceDelta d{.index = 0, .finish_reason = FinishReason::kCancelled};
    return stream.push({.deltas = {d}, .finished = true});
  }
  const bool scripted = !script.empty();
  const int32_t n = scripted ? std::min(r.max_tokens, static_cast<int32_t>(script.size())) : r.max_tokens;
  const bool ends = scripted && n == std::ssize(script);  // the script ran out before max_tokens
  for (int32_t i = 0; i < n && !stop_; ++i) {
    RequestUpdate u{.num_prompt_tokens = static_cast<int32_t>(r.prompt_ids.size()), .num_generated_tokens = i + 1};
    ChoiceDelta d{.index = 0, .text = scripted ? script[i] : std::string(1, static_cast<char>('a' + i % 26)),
                  .token_ids = {i}};
    if (was_cancelled(stream.request_id())) d.finish_reason = FinishReason::kCancelled;
    else if (i + 1 == n) d.finish_reason = ends ? FinishReason::kStop : FinishReason::kLength;
    u.finished = d.finish_reason != FinishReason::kNone;
    u.deltas.push_back(d);
    stream.push(std::move(u));
    if (u.finished) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace strata::server::test
