// gguf_to_hf_config: a Hugging Face config.json-like object built from a GGUF file's
// `<arch>.*` metadata, for the architectures GgufSource maps (llama, qwen2, qwen3), so
// ModelConfig::from_json reads a GGUF model like any other.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "strata/weights/gguf_file.h"

namespace strata {

// True for the `general.architecture` values Strata maps to HF names.
bool gguf_architecture_supported(std::string_view arch);

// Throws strata::Error naming the key when a required key is missing or malformed, or
// naming the architecture when it is not supported.
nlohmann::json gguf_to_hf_config(const GgufFile& file);

}  // namespace strata
