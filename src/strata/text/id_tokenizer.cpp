#include "strata/text/id_tokenizer.h"

#include <string>

#include "strata/text/vocab_spec.h"

namespace strata::text {

std::unique_ptr<Tokenizer> make_id_tokenizer(int32_t vocab_size) {
  VocabSpec spec;
  spec.model = "gpt2";
  for (int32_t i = 0; i < vocab_size; ++i) spec.tokens.push_back("<" + std::to_string(i) + ">");
  return Tokenizer::from_vocab(spec);
}

}  // namespace strata::text
