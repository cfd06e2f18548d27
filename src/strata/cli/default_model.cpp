#include "strata/cli/default_model.h"

#include <cstdlib>
#include <filesystem>

#include "strata/core/error.h"

namespace strata::cli {

std::string default_model_path() {
  // The one place the CLI reads the environment: where setup.sh put the default model.
  const char* cache = std::getenv("STRATA_CACHE_DIR");
  const char* home = std::getenv("HOME");
  const std::string base = cache != nullptr ? std::string(cache)
                                            : std::string(home != nullptr ? home : ".") + "/.cache/strata";
  const std::string path = base + "/models/smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(path))
    fail("no --model given and the default model is missing at {}; run scripts/setup.sh", path);
  return path;
}

}  // namespace strata::cli
