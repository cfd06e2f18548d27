// A stand-in tokenizer for checkpoints that ship none (the HF test fixtures): token i is
// spelled "<i>", so token-id prompts work end to end and output stays readable.
#pragma once

#include <memory>

#include "strata/text/tokenizer.h"

namespace strata::text {

std::unique_ptr<Tokenizer> make_id_tokenizer(int32_t vocab_size);

}  // namespace strata::text
