// Reads a Hugging Face tokenizer.json (BPE models) and the tokenizer_config.json beside it
// into TokenizerParts.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "strata/text/tokenizer_parts.h"

namespace strata::text {

// `path`: a tokenizer.json file, or a folder that holds one.
TokenizerParts read_hf_tokenizer(const std::string& path);
// tokenizer_config.json's bos/eos/pad/unk token strings, add_bos/eos_token and chat_template.
TokenizerConfig parse_tokenizer_config(const nlohmann::json& config);

}  // namespace strata::text
