// Logging through spdlog; one place sets the level from the options.
#pragma once

#include <spdlog/spdlog.h>

namespace strata {

void set_log_level(const std::string& level);  // trace, debug, info, warn, error

// Log lines go to stderr, so a command's stdout holds only its results (token ids, JSON).
void log_to_stderr();

}  // namespace strata
