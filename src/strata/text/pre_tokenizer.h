// Pre-tokenizers: cut normalized text into pieces that BPE encodes independently.
// Split (regex or literal, five delimiter behaviours, invert), ByteLevel (GPT-2 regex and
// prefix space; the byte->char mapping is implicit because byte-level vocabularies are kept
// in raw bytes), Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation, BertPreTokenizer
// (ASCII and Unicode punctuation), Sequence.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "strata/text/regex.h"

namespace strata::text {

// A piece of text; at_start marks the piece that begins at offset 0 of the whole input
// (Metaspace's prepend_scheme "first" only adds its prefix there).
struct Piece {
  std::string text;
  bool at_start = false;
};

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
enum class PrependScheme { kAlways, kFirst, kNever };

// GPT-2's split regex, used by ByteLevel(use_regex=true).
inline constexpr const char* kGpt2SplitRegex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel, kMetaspace };
  Kind kind = Kind::kSplit;
  std::shared_ptr<const Regex> regex;  // kSplit (null: split on `literal`); kByteLevel when use_regex
  std::string literal;                 // kSplit literal pattern; kMetaspace replacement
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;       // kByteLevel
  PrependScheme prepend_scheme = PrependScheme::kAlways;  // kMetaspace
  bool split = true;                   // kMetaspace
};

class PreTokenizer {
 public:
  // `config` is tokenizer.json's "pre_tokenizer" (null allowed); throws Error on unknown types.
  static PreTokenizer from_json(const nlohmann::json& config);
  // A sequence of regex splits, all Isolated (what GGUF pre-tokenizer flavours describe).
  static PreTokenizer from_regexes(const std::vector<std::string>& patterns);

  void add(PreTokenizerStep step) { steps_.push_back(std::move(step)); }
  bool empty() const { return steps_.empty(); }
  bool has_byte_level() const;
  // Appends the pieces of `text` to `out` (empty pieces are dropped).
  void pre_tokenize(std::string_view text, bool at_start, std::vector<Piece>& out) const;

 private:
  std::vector<PreTokenizerStep> steps_;
};

}  // namespace strata::text
