// The model step of a tokenizer: one pre-tokenized piece to token ids. BPE (bpe_model.h) and
// WordPiece (wordpiece_model.h) implement it; the Tokenizer only runs it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace strata::text {

class TokenModel {
 public:
  virtual ~TokenModel() = default;
  // Appends the ids of `piece` to `out`.
  virtual void encode(std::string_view piece, std::vector<int32_t>& out) const = 0;
  // Symbols are raw bytes (byte-level BPE): ill-formed UTF-8 input is encoded as it is.
  virtual bool byte_level() const = 0;
};

}  // namespace strata::text
