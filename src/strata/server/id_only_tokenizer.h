// A stand-in tokenizer for a model served without one (a Hugging Face folder with no
// tokenizer.json): token i is spelled "<i>", so the engine's detokenizer still produces
// readable text for token-id prompts. The server never encodes text with it.
#pragma once

#include <memory>

#include "strata/text/tokenizer.h"

namespace strata::server {

std::unique_ptr<text::Tokenizer> make_id_only_tokenizer(int64_t vocab_size);

}  // namespace strata::server
