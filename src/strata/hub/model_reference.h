// A model named on the command line: a local path, or a Hugging Face repo id `org/name`
// with an optional `:TAG` that picks one .gguf file by its quantization (e.g. Q4_K_M).
// A path that exists always wins over a repo id of the same spelling.
#pragma once

#include <optional>
#include <string>

namespace strata::hub {

struct ModelReference {
  std::string repo_id;  // "org/name"
  std::string gguf_tag;  // "" or e.g. "Q4_K_M"
};

// nullopt: `text` is a path (it exists, or does not look like `org/name[:tag]`).
std::optional<ModelReference> parse_model_reference(const std::string& text);

}  // namespace strata::hub
