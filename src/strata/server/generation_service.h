// What the HTTP layer needs from the engine: submit, cancel, stats, shutdown. The server
// talks to this interface so its contract tests run against a scripted fake; EngineService
// (engine_service.h) forwards to the real Engine.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "strata/engine/engine_stats.h"
#include "strata/engine/request.h"

namespace strata::server {

class GenerationService {
 public:
  virtual ~GenerationService() = default;
  // Throws strata::Error for a request the engine refuses (the server answers 400).
  virtual std::shared_ptr<RequestStream> submit(GenerationRequest request) = 0;
  virtual void cancel(int64_t request_id) = 0;
  virtual void shutdown(std::chrono::milliseconds deadline) = 0;
  virtual bool running() const = 0;
  virtual int32_t max_model_len() const = 0;
  virtual EngineStatsSnapshot stats() const = 0;
  // One snapshot per data-parallel replica (/metrics labels vLLM's names by replica).
  virtual std::vector<EngineStatsSnapshot> replica_stats() const { return {stats()}; }
};

}  // namespace strata::server
