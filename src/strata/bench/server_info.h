// What a benchmark client asks a running OpenAI-compatible server before it starts: the
// model it serves (GET /v1/models), whose `root` names its local files for the tokenizer.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace strata::bench {

// "http://host:8000/prefix/" -> ("http://host:8000", "/prefix").
std::pair<std::string, std::string> split_base_url(const std::string& base_url);

struct ServedModelCard {
  std::string id;
  std::string root;  // the served files' path on the server's machine (empty if not given)
};

// The first model /v1/models lists; nullopt when the server is unreachable or lists none.
std::optional<ServedModelCard> first_served_model(const std::string& base_url);

}  // namespace strata::bench
