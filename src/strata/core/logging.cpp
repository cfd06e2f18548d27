#include "strata/core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "strata/core/error.h"

namespace strata {

void set_log_level(const std::string& level) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off")
    fail("unknown log level '{}'; use trace, debug, info, warn, error or off", level);
  spdlog::set_level(parsed);
}

void log_to_stderr() {
  if (spdlog::get("strata") != nullptr) return;
  auto logger = spdlog::stderr_color_mt("strata");
  logger->set_level(spdlog::default_logger()->level());
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace strata
