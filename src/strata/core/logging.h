// Logging through spdlog; one place sets the level from the options.
#pragma once

#include <spdlog/spdlog.h>

namespace strata {

void set_log_level(const std::string& level);  // trace, debug, info, warn, error

}  // namespace strata
