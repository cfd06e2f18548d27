// The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF), fetched by scripts/setup.sh.
#pragma once

#include <string>

namespace strata::cli {

// $STRATA_CACHE_DIR/models/... or ~/.cache/strata/models/...; an Error says to run
// scripts/setup.sh when the file is missing.
std::string default_model_path();

}  // namespace strata::cli
