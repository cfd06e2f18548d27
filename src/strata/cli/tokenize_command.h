// Registers `strata tokenize` and `strata detokenize` on the app.
#pragma once

#include <CLI/CLI.hpp>

namespace strata::cli {

void add_tokenize_commands(CLI::App& app);

}  // namespace strata::cli
