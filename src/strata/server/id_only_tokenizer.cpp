#include "strata/server/id_only_tokenizer.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/vocab_spec.h"

namespace strata::server {

std::unique_ptr<text::Tokenizer> make_id_only_tokenizer(int64_t vocab_size) {
  if (vocab_size <= 0) fail("cannot make a token-id tokenizer for a vocabulary of {} tokens", vocab_size);
  text::VocabSpec spec;
  spec.model = "gpt2";
  spec.tokens.reserve(static_cast<size_t>(vocab_size));
  // Printable ASCII spells itself under the byte-level decoder, so "<12>" decodes to "<12>".
  for (int64_t i = 0; i < vocab_size; ++i) spec.tokens.push_back(fmt::format("<{}>", i));
  return text::Tokenizer::from_vocab(spec);
}

}  // namespace strata::server
