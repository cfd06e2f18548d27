// What every command that runs the serving Engine shares: its scheduler and cache flags
// (vLLM's names) and the CUDA graph capture that comes before the first request.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "strata/cli/model_flags.h"
#include "strata/engine/engine_options.h"
#include "strata/text/tokenizer.h"

namespace strata::cli {

void add_engine_flags(CLI::App& command, EngineOptions& engine);
// --speculative-config (vLLM's JSON), parsed into `speculative` (strata serve and generate).
void add_speculative_config_flag(CLI::App& command, SpeculativeOptions& speculative);

// Live sequences, n > 1 forks and the prefix cache's snapshots each hold an SSM slot.
void size_ssm_slots(ModelFlags& model, const EngineOptions& engine);

// Captures the decode graphs up to max_num_seqs rows on a GPU (a no-op on the CPU), telling
// `who` how long it took.
void capture_decode_graphs(OpenModel& open, const EngineOptions& engine, const std::string& who);

}  // namespace strata::cli
