// The engines `strata serve` runs: one, or --data-parallel-size replicas behind one front end.
// On the CPU the replicas share one loaded model (weights once), each with its own runner (KV
// cache, SequenceMemory) and engine thread; on GPUs replica i loads the model on GPU i.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/cli/model_flags.h"
#include "strata/engine/engine.h"
#include "strata/server/data_parallel_service.h"
#include "strata/server/engine_service.h"

namespace strata::cli {

// The replicas' models and runners. On GPUs one model per replica; on the CPU one shared.
struct ServeReplicas {
  std::vector<OpenModel> models;                          // [0] always; on GPUs one per replica
  std::vector<std::unique_ptr<ModelRunner>> own_runners;  // CPU replicas 1..: runners over models[0]
  std::vector<ModelRunner*> runners;                      // per replica
  std::vector<ModelRunner*> draft_runners;                // per replica; null without a draft runner

  int32_t size() const { return static_cast<int32_t>(runners.size()); }
  const OpenModel& first() const { return models[0]; }
};

// The replicas' engines and the front end; made after (and destroyed before) the runners,
// the tokenizer and the LoRA adapters they read.
struct ServeEngines {
  std::vector<std::unique_ptr<Engine>> engines;  // per replica
  std::vector<std::unique_ptr<server::EngineService>> services;
  std::unique_ptr<server::DataParallelService> front;  // null for one replica

  server::GenerationService& service();
  // The first replica's reason to have stopped (named by replica when there are several).
  std::optional<std::string> fatal_error() const;
};

// Checks what does not combine with data parallelism yet, then opens the replicas' models and
// runners (no engines yet: LoRA and graph capture come between).
ServeReplicas open_serve_replicas(const ModelFlags& flags, const EngineOptions& engine, int32_t num_replicas);

// Starts one engine per replica (replica r numbers its requests r + 1 + k * N) and, for
// several, the front end that routes between them.
ServeEngines start_engines(const ServeReplicas& replicas, const text::Tokenizer& tokenizer,
                           const std::vector<int32_t>& eos_token_ids, const EngineOptions& options);

}  // namespace strata::cli
