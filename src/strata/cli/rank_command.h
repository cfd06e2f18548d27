// `strata rank`: a hidden command that a rank 0 other than the strata command (the Python module's
// LLM(tensor_parallel_size=N)) runs as each of its other ranks. Its command line is rank 0's model
// flags, then the rank's place; the rank opens its part of the model and runs what rank 0 sends
// until it says stop, as a rank that `strata generate` started does.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "strata/cli/model_flags.h"

namespace strata::cli {

// Flags that add_model_flags and add_parallel_flags read back into the model and split of
// `flags`; not a started rank's place, the rank command, the SSM slots or the GPU (rank 0 sends
// or sets those).
std::vector<std::string> model_flag_args(const ModelFlags& flags);

// `program rank <model_flag_args>`: rank 0's other ranks as the strata command at `program`.
RankCommand rank_command(const std::string& program, const ModelFlags& flags);

void add_rank_command(CLI::App& app);

}  // namespace strata::cli
