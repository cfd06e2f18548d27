// Runs a batch of requests through an in-process Engine, all submitted at once, and records
// when each one's first token came and when it finished: the measurement under `strata bench
// latency`, `strata bench throughput` and bench/engine_throughput_bench.
#pragma once

#include <string>
#include <vector>

#include "strata/engine/engine.h"

namespace strata::bench {

// Seconds from the common submit time.
struct EngineRequestTiming {
  double first_token_s = -1;
  double finish_s = -1;
  int64_t output_tokens = 0;
  FinishReason reason = FinishReason::kNone;
  std::string error;
};

struct EngineRun {
  double wall_s = 0;
  std::vector<EngineRequestTiming> requests;  // in submission order
};

// One polling thread sweeps the streams, keeping the engine thread's cores free. Throws an
// Error when some request is still running after timeout_s.
EngineRun run_engine_workload(Engine& engine, std::vector<GenerationRequest> requests, double timeout_s);

// An Error naming the first request that failed or did not end by length with exactly
// output_tokens tokens: the figures would describe a different workload.
void check_exact_lengths(const EngineRun& run, const std::vector<int64_t>& output_tokens);

}  // namespace strata::bench
