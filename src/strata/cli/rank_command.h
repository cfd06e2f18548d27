// `strata rank`: a hidden command that a rank 0 other than the strata command (the Python module's
// LLM(tensor_parallel_size=N)) runs as each of its other ranks. Its command line is rank 0's model
// flags (and LoRA slots when rank 0 loads adapters by path), then the rank's place; the rank opens
// its part of the model and runs what rank 0 sends until it says stop, as a rank that `strata
// generate` started does.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "strata/cli/model_flags.h"

namespace strata::cli {

// Flags that add_model_flags and add_parallel_flags read back into the model and split of
// `flags`; not a started rank's place, the rank command, the SSM slots or the GPU (rank 0 sends
// or sets those).
std::vector<std::string> model_flag_args(const ModelFlags& flags);

// `program rank <model_flag_args>`: rank 0's other ranks as the strata command at `program`.
// lora: rank 0's slots, which each rank makes too (--max-loras, --max-lora-rank) for the
// adapters rank 0 loads into them later.
RankCommand rank_command(const std::string& program, const ModelFlags& flags,
                         const std::optional<LoraCapacity>& lora = std::nullopt);

// The hidden --max-loras and --max-lora-rank of `strata rank`: rank 0's LoRA slots.
struct RankLoraFlags {
  int32_t max_loras = 0;  // 0: rank 0 loads no adapters by path
  int64_t max_lora_rank = 16;
  std::optional<LoraCapacity> capacity() const;
};
void add_rank_lora_flags(CLI::App& command, RankLoraFlags& flags);

void add_rank_command(CLI::App& app);

}  // namespace strata::cli
