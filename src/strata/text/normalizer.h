// Text normalizers applied to each piece of input between added tokens, as Hugging Face
// tokenizers does: Unicode forms (NFC/NFD/NFKC/NFKD via ICU), Lowercase, Replace, Prepend,
// Strip, StripAccents, BertNormalizer (as its steps: clean text, space around CJK characters,
// NFD and strip accents, lowercase), and Sequence (flattened into the step list).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "strata/text/regex.h"

namespace strata::text {

struct NormalizerStep {
  enum class Kind {
    kNfc, kNfd, kNfkc, kNfkd, kLowercase, kReplace, kPrepend, kStrip,
    kStripAccents,     // drop nonspacing marks (after NFD)
    kBertCleanText,    // drop NUL, U+FFFD and control characters; any whitespace becomes ' '
    kBertChineseChars  // a space on each side of every CJK ideograph
  };
  Kind kind = Kind::kNfc;
  std::string pattern;                 // kReplace: literal pattern (when regex is null)
  std::shared_ptr<const Regex> regex;  // kReplace: regex pattern
  std::string content;                 // kReplace: replacement; kPrepend: prefix
  bool strip_left = false, strip_right = false;  // kStrip
};

class Normalizer {
 public:
  Normalizer() = default;
  // `config` is tokenizer.json's "normalizer" (null allowed); throws Error on unknown types.
  static Normalizer from_json(const nlohmann::json& config);

  void add(NormalizerStep step) { steps_.push_back(std::move(step)); }
  bool empty() const { return steps_.empty(); }
  // Ill-formed UTF-8 passes through the Unicode forms untouched.
  std::string normalize(std::string_view text) const;

 private:
  std::vector<NormalizerStep> steps_;
};

}  // namespace strata::text
