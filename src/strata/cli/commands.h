// Each CLI subcommand lives in its own file and registers itself on the app here.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

void add_commands(CLI::App& app);

}  // namespace strata::cli
