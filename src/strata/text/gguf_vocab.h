// The tokenizer a GGUF file carries in its tokenizer.ggml.* metadata, as a VocabSpec.
#pragma once

#include "strata/text/vocab_spec.h"
#include "strata/weights/gguf_file.h"

namespace strata::text {

// Throws an Error naming the file when the metadata lacks a tokenizer or holds a kind
// other than gpt2 / llama.
VocabSpec vocab_spec_from_gguf(const GgufFile& file);

}  // namespace strata::text
