// Decoders turn token spellings back into text, as Hugging Face's decoder chain does:
// ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece and Sequence (flattened).
// Each step maps the list of token strings to a new list; the result is their concatenation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "strata/text/regex.h"

namespace strata::text {

struct DecoderStep {
  enum class Kind { kByteLevel, kMetaspace, kByteFallback, kFuse, kStrip, kReplace, kWordPiece };
  Kind kind = Kind::kFuse;
  std::string pattern;                 // kReplace literal pattern; kMetaspace / kStrip character;
                                       // kWordPiece continuing-subword prefix
  std::shared_ptr<const Regex> regex;  // kReplace regex pattern
  std::string content;                 // kReplace replacement
  int strip_start = 0, strip_stop = 0;  // kStrip: characters to remove at each end
  bool prepend = true;                  // kMetaspace: the encoder prepended a replacement
  bool cleanup = true;                  // kWordPiece: glue punctuation and contractions back
};

class TokenDecoder {
 public:
  // `config` is tokenizer.json's "decoder"; null means tokens are joined with spaces.
  static TokenDecoder from_json(const nlohmann::json& config);
  void add(DecoderStep step) { steps_.push_back(std::move(step)); }
  std::string decode(std::vector<std::string> tokens) const;

 private:
  std::vector<DecoderStep> steps_;
  bool join_with_spaces_ = false;
};

}  // namespace strata::text
