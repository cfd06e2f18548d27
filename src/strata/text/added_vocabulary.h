// Added tokens (special or not) are found in the text before pre-tokenization: leftmost,
// longest match first, honouring lstrip / rstrip / single_word like Hugging Face's
// AddedVocabulary. Tokens with normalized=false are matched in the raw text, the others in
// the normalized text of each remaining gap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strata::text {

class Normalizer;

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false, rstrip = false, single_word = false;
  bool normalized = false;
};

// A stretch of text: either an added token (token_id >= 0) or plain text to tokenize.
struct TextSegment {
  std::string_view text;
  int32_t token_id = -1;
  size_t offset = 0;  // byte offset of text in the string that was split
};

// A byte trie over token contents with leftmost-longest search.
class AddedTokenMatcher {
 public:
  void add(const AddedToken& token);
  bool empty() const { return tokens_.empty(); }
  std::vector<TextSegment> split(std::string_view text) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // byte -> node index
    int32_t token = -1;                                  // index into tokens_
  };
  std::optional<std::pair<size_t, int32_t>> longest_at(std::string_view text, size_t pos) const;

  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_{Node{}};
  bool first_byte_[256] = {};
};

class AddedVocabulary {
 public:
  void add(const AddedToken& token);
  // normalized=true tokens are searched for in normalized text, so their contents are
  // normalized too and decode to that form (as in Hugging Face); call once, when the
  // normalizer is known.
  void normalize_contents(const Normalizer& normalizer);
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  const AddedToken* find(int32_t id) const;
  std::optional<int32_t> find(std::string_view content) const;
  const AddedTokenMatcher& raw_matcher() const { return raw_; }
  const AddedTokenMatcher& normalized_matcher() const { return normalized_; }

 private:
  std::vector<AddedToken> tokens_;
  std::vector<int32_t> slot_of_id_;  // id -> index into tokens_, -1 if none
  AddedTokenMatcher raw_, normalized_;
};

}  // namespace strata::text
