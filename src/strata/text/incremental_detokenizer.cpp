// Window decoding: window_ starts at the token group that produced the last delta, so the
// decoder sees the same left context as in a full decode (byte merges, Strip, Metaspace).
#include "strata/text/incremental_detokenizer.h"

#include <cctype>

#include "strata/text/utf8.h"

namespace strata::text {
namespace {

bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

bool is_byte_token(const std::string& t) {
  return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
         std::isxdigit(static_cast<unsigned char>(t[3])) && std::isxdigit(static_cast<unsigned char>(t[4]));
}

}  // namespace

// ByteFallback decodes a run of <0xXX> tokens as one group (valid UTF-8, or one U+FFFD per
// byte), so a later byte token can rewrite the text of earlier ones: "<0x21>" is "!" but
// "<0x21><0xBB>" is two U+FFFD. A run's text is final once a token the decoder sees ends it.
bool IncrementalDetokenizer::ends_in_byte_token() const {
  for (auto it = window_.rbegin(); it != window_.rend(); ++it) {
    if (skip_special_tokens_ && tokenizer_.is_special(*it)) continue;  // decode drops these
    const std::optional<std::string> spelling = tokenizer_.id_to_token(*it);
    if (spelling && !spelling->empty()) return is_byte_token(*spelling);
  }
  return false;
}

std::string IncrementalDetokenizer::push(int32_t id) {
  if (prefix_.empty() && !window_.empty() && !ends_in_byte_token()) {
    std::string new_prefix = tokenizer_.decode(window_, skip_special_tokens_);
    if (!ends_with_replacement(new_prefix)) {
      prefix_ = std::move(new_prefix);
      prefix_count_ = window_.size();
    }
  }
  window_.push_back(id);
  if (ends_in_byte_token()) return "";
  const std::string text = tokenizer_.decode(window_, skip_special_tokens_);
  if (text.size() <= prefix_.size() || ends_with_replacement(text)) return "";
  std::string delta = emit(text);
  // Keep the tokens of the group just emitted as left context for the next window.
  const size_t new_prefix_count = window_.size() - prefix_count_;
  window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(prefix_count_));
  prefix_ = tokenizer_.decode(window_, skip_special_tokens_);
  prefix_count_ = new_prefix_count;
  return delta;
}

std::string IncrementalDetokenizer::emit(const std::string& text) {
  // The window decode extends the prefix for every decoder Strata supports; were a decoder
  // to rewrite earlier text, the cut could fall inside a character, so repair it.
  std::string delta = text.substr(prefix_.size());
  if (!is_valid_utf8(delta)) delta = utf8_lossy(delta);
  return delta;
}

std::string IncrementalDetokenizer::finish() {
  if (window_.empty()) return "";
  const std::string text = tokenizer_.decode(window_, skip_special_tokens_);
  std::string delta = text.size() > prefix_.size() ? emit(text) : "";
  window_.clear();
  prefix_.clear();
  prefix_count_ = 0;
  return delta;
}

}  // namespace strata::text
