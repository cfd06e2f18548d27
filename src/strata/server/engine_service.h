// EngineService: the GenerationService of a live Engine (a plain forwarder).
#pragma once

#include "strata/engine/engine.h"
#include "strata/server/generation_service.h"

namespace strata::server {

class EngineService final : public GenerationService {
 public:
  explicit EngineService(Engine& engine) : engine_(engine) {}
  std::shared_ptr<RequestStream> submit(GenerationRequest request) override {
    return engine_.submit(std::move(request));
  }
  void cancel(int64_t request_id) override { engine_.cancel(request_id); }
  void shutdown(std::chrono::milliseconds deadline) override { engine_.shutdown(deadline); }
  bool running() const override { return engine_.running(); }
  int32_t max_model_len() const override { return engine_.max_model_len(); }
  EngineStatsSnapshot stats() const override { return engine_.stats(); }

 private:
  Engine& engine_;
};

}  // namespace strata::server
