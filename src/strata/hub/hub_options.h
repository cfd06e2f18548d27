// Where Hugging Face models come from: the Hub endpoint, the cache folder, the token and
// offline mode. Built once from the Hugging Face ecosystem's standard environment variables
// (shared with huggingface_hub, so both use one cache) plus the --revision flag.
#pragma once

#include <string>

namespace strata::hub {

struct HubOptions {
  std::string cache_dir;                          // HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, no trailing slash
  std::string token;                              // HF_TOKEN; empty: anonymous
  bool offline = false;                           // HF_HUB_OFFLINE=1: never touch the network
  std::string revision = "main";                  // branch, tag or 40-hex commit
  bool show_progress = true;                      // a progress line on stderr while downloading
};

// The one place the hub code reads the environment.
HubOptions hub_options_from_environment(const std::string& revision);

}  // namespace strata::hub
