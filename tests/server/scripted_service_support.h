// ScriptedService: a GenerationService for the server's contract tests. Each request
// streams "a", "b", ... (or the texts of set_script, then stops) one token per 2 ms until
// max_tokens or a cancel; a prompt starting
// with 99 fails, one starting with 98 sends nothing until cancelled (a request still queued
// or prefilling).
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "strata/server/generation_service.h"

namespace strata::server::test {

class ScriptedService final : public GenerationService {
 public:
  ~ScriptedService() override;
  std::shared_ptr<RequestStream> submit(GenerationRequest request) override;
  void cancel(int64_t id) override;
  void shutdown(std::chrono::milliseconds) override {}
  bool running() const override { return true; }
  int32_t max_model_len() const override { return 8192; }
  EngineStatsSnapshot stats() const override { return {}; }

  bool was_cancelled(int64_t id);
  // Waits up to `timeout` for request `id` to be cancelled.
  bool wait_cancelled(int64_t id, std::chrono::milliseconds timeout);
  int64_t num_submitted();
  // Requests submitted later stream these texts, one per token, and finish with "stop"
  // (or "length" at max_tokens).
  void set_script(std::vector<std::string> texts);

 private:
  void play(RequestStream& stream, const GenerationRequest& r, const std::vector<std::string>& script);

  std::mutex mutex_;
  std::atomic<bool> stop_{false};
  int64_t next_id_ = 1;
  std::set<int64_t> cancelled_;
  std::vector<std::string> script_;
  std::vector<std::thread> threads_;
};

}  // namespace strata::server::test
