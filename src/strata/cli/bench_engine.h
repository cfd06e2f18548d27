// The in-process engine `strata bench latency` and `strata bench throughput` measure: the
// model flags of every command, the serving engine's flags, and the engine built from them
// as `strata serve` builds it (CUDA graphs captured before the first request).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "strata/bench/engine_workload.h"
#include "strata/cli/engine_flags.h"

namespace strata::cli {

struct OfflineBenchFlags {
  ModelFlags model;  // the embedded SmolLM2 when --model is not given
  EngineOptions engine;
  std::string output_json;  // the result file; empty: none
};

void add_offline_bench_flags(CLI::App& command, OfflineBenchFlags& flags);

struct BenchEngine {
  OpenModel open;
  ModelTokenizer text;
  std::unique_ptr<Engine> engine;
  ~BenchEngine();  // lets running requests finish, then stops the engine thread
};

std::unique_ptr<BenchEngine> start_bench_engine(const OfflineBenchFlags& flags);

constexpr double kBenchTimeoutS = 24 * 3600.0;  // a pass that long is stuck, not slow

void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace strata::cli
