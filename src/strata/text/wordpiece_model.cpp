#include "strata/text/wordpiece_model.h"

#include "strata/text/utf8.h"

namespace strata::text {

WordPieceModel::WordPieceModel(const std::vector<std::string>& tokens, const WordPieceOptions& options)
    : options_(options) {
  for (size_t id = 0; id < tokens.size(); ++id)
    if (!tokens[id].empty()) index_.emplace(tokens[id], static_cast<int32_t>(id));
}

void WordPieceModel::encode(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  std::vector<size_t> boundaries;  // byte offset of every character, then the end
  for (size_t pos = 0; pos < word.size();) {
    boundaries.push_back(pos);
    const size_t n = utf8_sequence_length(word, pos);
    pos += n > 0 ? n : 1;
  }
  const size_t num_chars = boundaries.size();
  boundaries.push_back(word.size());
  if (static_cast<int64_t>(num_chars) > options_.max_input_chars_per_word) {
    out.push_back(options_.unk_id);
    return;
  }
  std::vector<int32_t> pieces;
  std::string candidate;
  for (size_t start = 0; start < num_chars;) {
    size_t end = num_chars;
    int32_t found = -1;
    for (; end > start; --end) {  // the longest piece from `start` the vocabulary has
      candidate = start > 0 ? options_.continuing_subword_prefix : std::string();
      candidate.append(word.substr(boundaries[start], boundaries[end] - boundaries[start]));
      if (const auto it = index_.find(candidate); it != index_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      out.push_back(options_.unk_id);
      return;
    }
    pieces.push_back(found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace strata::text
