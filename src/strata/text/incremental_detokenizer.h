// Streams text for ids arriving one at a time. Each delta is whole UTF-8 characters: text
// that still ends in an incomplete sequence (a byte-fallback <0xE6> waiting for its
// continuation bytes, half of a byte-level emoji) is held back. The concatenation of all
// deltas plus finish() equals Tokenizer::decode of all ids, including SentencePiece's
// "first token loses its leading space" rule, because every window is decoded together
// with the token before it (the scheme of Hugging Face tokenizers' DecodeStream), and a run
// of byte-fallback tokens is held back until a token that is not one ends it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/text/tokenizer.h"

namespace strata::text {

class IncrementalDetokenizer {
 public:
  IncrementalDetokenizer(const Tokenizer& tokenizer, bool skip_special_tokens)
      : tokenizer_(tokenizer), skip_special_tokens_(skip_special_tokens) {}

  // The new text `id` completes; empty while bytes are held back.
  std::string push(int32_t id);
  // Text still held back at the end of the stream (ill-formed bytes come out as U+FFFD).
  std::string finish();

 private:
  std::string emit(const std::string& text);
  bool ends_in_byte_token() const;  // the last token decode sees is a <0xXX> byte token

  const Tokenizer& tokenizer_;
  bool skip_special_tokens_;
  std::vector<int32_t> window_;  // ids from the last emitted token group on
  std::string prefix_;           // decode of window_[0, prefix_count_)
  size_t prefix_count_ = 0;
};

}  // namespace strata::text
