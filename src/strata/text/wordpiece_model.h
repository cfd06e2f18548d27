// The WordPiece model (BERT): each pre-tokenized word becomes its longest vocabulary prefix, then
// the longest "##"-prefixed continuation, and so on; a word with a part no token covers, or longer
// than max_input_chars_per_word characters, becomes the unknown token. As Hugging Face tokenizers'
// WordPiece does.
#pragma once

#include <string>
#include <vector>

#include "strata/text/bpe_model.h"
#include "strata/text/token_model.h"

namespace strata::text {

struct WordPieceOptions {
  std::string continuing_subword_prefix = "##";
  int64_t max_input_chars_per_word = 100;
  int32_t unk_id = 0;
};

class WordPieceModel final : public TokenModel {
 public:
  // tokens[id]: the spelling of each id (continuations carry the prefix).
  WordPieceModel(const std::vector<std::string>& tokens, const WordPieceOptions& options);
  void encode(std::string_view word, std::vector<int32_t>& out) const override;
  bool byte_level() const override { return false; }

 private:
  TokenIndex index_;
  WordPieceOptions options_;
};

}  // namespace strata::text
