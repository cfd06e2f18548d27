// Matching follows Hugging Face's AddedVocabulary::find_matches: a match that breaks
// single_word is skipped (shorter tokens are not retried), lstrip/rstrip swallow the
// whitespace beside the token into it.
#include "strata/text/added_vocabulary.h"

#include <unicode/uchar.h>

#include "strata/text/normalizer.h"
#include "strata/text/utf8.h"

namespace strata::text {
namespace {

bool is_word_char(char32_t cp) { return cp == '_' || u_isalnum(static_cast<UChar32>(cp)); }

// The code point ending at `end` (or 0 if the bytes there are ill-formed).
char32_t last_char(std::string_view text, size_t end) {
  for (size_t back = 1; back <= 4 && back <= end; ++back) {
    char32_t cp = 0;
    if (utf8_sequence_length(text, end - back, &cp) == back) return cp;
  }
  return 0;
}

bool is_space(char32_t cp) { return u_isUWhiteSpace(static_cast<UChar32>(cp)); }

size_t skip_space_forward(std::string_view text, size_t pos) {
  char32_t cp = 0;
  while (pos < text.size()) {
    const size_t n = utf8_sequence_length(text, pos, &cp);
    if (n == 0 || !is_space(cp)) break;
    pos += n;
  }
  return pos;
}

size_t skip_space_backward(std::string_view text, size_t pos) {
  while (pos > 0) {
    const char32_t cp = last_char(text, pos);
    if (!is_space(cp)) break;
    size_t n = 1;
    while (n < 4 && pos >= n && (static_cast<uint8_t>(text[pos - n]) & 0xC0) == 0x80) ++n;
    pos -= n;
  }
  return pos;
}

}  // namespace

void AddedTokenMatcher::add(const AddedToken& token) {
  if (token.content.empty()) return;
  int32_t node = 0;
  for (char c : token.content) {
    const auto byte = static_cast<uint8_t>(c);
    int32_t child = -1;
    for (const auto& [b, idx] : nodes_[node].children)
      if (b == byte) child = idx;
    if (child < 0) {
      child = static_cast<int32_t>(nodes_.size());
      nodes_[node].children.emplace_back(byte, child);
      nodes_.emplace_back();
    }
    node = child;
  }
  if (nodes_[node].token >= 0) return;  // the first token with this content wins
  nodes_[node].token = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  first_byte_[static_cast<uint8_t>(token.content[0])] = true;
}

std::optional<std::pair<size_t, int32_t>> AddedTokenMatcher::longest_at(std::string_view text, size_t pos) const {
  std::optional<std::pair<size_t, int32_t>> best;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto byte = static_cast<uint8_t>(text[i]);
    int32_t child = -1;
    for (const auto& [b, idx] : nodes_[node].children)
      if (b == byte) child = idx;
    if (child < 0) break;
    node = child;
    if (nodes_[node].token >= 0) best = {i + 1, nodes_[node].token};
  }
  return best;
}

std::vector<TextSegment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<TextSegment> out;
  size_t emitted = 0;  // end of what has been emitted so far
  for (size_t pos = 0; pos < text.size();) {
    if (!first_byte_[static_cast<uint8_t>(text[pos])]) {
      ++pos;
      continue;
    }
    const auto match = longest_at(text, pos);
    if (!match) {
      ++pos;
      continue;
    }
    const AddedToken& token = tokens_[match->second];
    size_t begin = pos, end = match->first;
    pos = end;
    if (token.single_word) {
      const bool left_ok = begin == 0 || !is_word_char(last_char(text, begin));
      char32_t next = 0;
      const bool right_ok = end == text.size() || utf8_sequence_length(text, end, &next) == 0 || !is_word_char(next);
      if (!left_ok || !right_ok) continue;
    }
    if (token.lstrip) begin = std::max(skip_space_backward(text, begin), emitted);
    if (token.rstrip) end = skip_space_forward(text, end);
    if (begin > emitted) out.push_back({text.substr(emitted, begin - emitted), -1, emitted});
    out.push_back({text.substr(begin, end - begin), token.id, begin});
    emitted = end;
    pos = end;
  }
  if (emitted < text.size() || out.empty()) out.push_back({text.substr(emitted), -1, emitted});
  return out;
}

void AddedVocabulary::add(const AddedToken& token) {
  if (token.id < 0) return;
  if (static_cast<size_t>(token.id) >= slot_of_id_.size()) slot_of_id_.resize(token.id + 1, -1);
  if (slot_of_id_[token.id] >= 0) return;
  slot_of_id_[token.id] = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  (token.normalized ? normalized_ : raw_).add(token);
}

void AddedVocabulary::normalize_contents(const Normalizer& normalizer) {
  normalized_ = AddedTokenMatcher();
  for (AddedToken& t : tokens_) {
    if (!t.normalized) continue;
    t.content = normalizer.normalize(t.content);
    normalized_.add(t);
  }
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= slot_of_id_.size() || slot_of_id_[id] < 0) return nullptr;
  return &tokens_[slot_of_id_[id]];
}

std::optional<int32_t> AddedVocabulary::find(std::string_view content) const {
  for (const AddedToken& t : tokens_)
    if (t.content == content) return t.id;
  return std::nullopt;
}

}  // namespace strata::text
