#include "strata/hub/hub_options.h"

#include <cstdlib>

namespace strata::hub {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// huggingface_hub's truthy spellings, so one HF_HUB_OFFLINE works for both tools.
bool env_flag(const char* name) {
  const std::string v = env_or(name, "");
  return v == "1" || v == "true" || v == "TRUE" || v == "True" || v == "yes" || v == "YES" || v == "on" ||
         v == "ON";
}

}  // namespace

HubOptions hub_options_from_environment(const std::string& revision) {
  HubOptions options;
  const std::string home = env_or("HOME", ".");
  const std::string hf_home = env_or("HF_HOME", env_or("XDG_CACHE_HOME", home + "/.cache") + "/huggingface");
  options.cache_dir = env_or("HF_HUB_CACHE", hf_home + "/hub");
  options.endpoint = env_or("HF_ENDPOINT", options.endpoint);
  while (!options.endpoint.empty() && options.endpoint.back() == '/') options.endpoint.pop_back();
  options.token = env_or("HF_TOKEN", "");
  options.offline = env_flag("HF_HUB_OFFLINE");
  options.revision = revision.empty() ? "main" : revision;
  return options;
}

}  // namespace strata::hub
