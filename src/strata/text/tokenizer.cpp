// The encode pipeline, in Hugging Face's order: added tokens in the raw text -> normalize
// each gap -> added tokens in the normalized text -> pre-tokenize -> BPE per piece ->
// post-process (BPE or WordPiece per piece). Decode maps ids to spellings and runs the decoder chain.
#include "strata/text/tokenizer.h"

#include "strata/core/error.h"
#include "strata/text/utf8.h"

namespace strata::text {

Tokenizer::Tokenizer(TokenizerParts parts)
    : normalizer_(std::move(parts.normalizer)),
      pre_tokenizer_(std::move(parts.pre_tokenizer)),
      model_(std::move(parts.model)),
      token_strings_(std::move(parts.token_strings)),
      added_(std::move(parts.added)),
      post_processor_(std::move(parts.post_processor)),
      decoder_(std::move(parts.decoder)),
      config_(std::move(parts.config)) {
  STRATA_CHECK(model_ != nullptr);
  for (const AddedToken& t : added_.tokens()) token_index_.emplace(t.content, t.id);
  added_.normalize_contents(normalizer_);
  for (size_t id = 0; id < token_strings_.size(); ++id)
    if (!token_strings_[id].empty()) token_index_.emplace(token_strings_[id], static_cast<int32_t>(id));
  bos_id_ = parts.bos_id ? parts.bos_id : resolve(config_.bos_token);
  eos_id_ = parts.eos_id ? parts.eos_id : resolve(config_.eos_token);
  pad_id_ = parts.pad_id ? parts.pad_id : resolve(config_.pad_token);
}

std::optional<int32_t> Tokenizer::resolve(const std::optional<std::string>& token) const {
  if (!token) return std::nullopt;
  return token_to_id(*token);
}

int64_t Tokenizer::content_budget(int64_t max_tokens, bool add_special_tokens, bool pair) const {
  const int64_t num_special = add_special_tokens ? post_processor_.num_special_tokens(pair) : 0;
  if (max_tokens <= num_special)
    fail("cannot truncate to {} tokens: the special tokens alone take {}; allow more tokens", max_tokens, num_special);
  return max_tokens - num_special;
}

std::vector<int32_t> Tokenizer::encode_pair(std::string_view a, std::string_view b, bool add_special_tokens,
                                            std::vector<int32_t>* type_ids, int64_t max_tokens) const {
  std::vector<int32_t> first = encode(a, false), second = encode(b, false);
  if (max_tokens > 0) {
    size_t n_first = first.size(), n_second = second.size();
    const size_t budget = static_cast<size_t>(content_budget(max_tokens, add_special_tokens, /*pair=*/true));
    while (n_first + n_second > budget) (n_first > n_second ? n_first : n_second) -= 1;
    first.resize(n_first);
    second.resize(n_second);
  }
  if (add_special_tokens) return post_processor_.apply_pair(first, second, type_ids);
  if (type_ids != nullptr) {
    type_ids->assign(first.size(), 0);
    type_ids->insert(type_ids->end(), second.size(), 1);
  }
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens, int64_t max_tokens) const {
  std::string repaired;
  if (!model_->byte_level() && !is_valid_utf8(text)) {
    repaired = utf8_lossy(text);
    text = repaired;
  }
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 4);
  if (added_.raw_matcher().empty()) {
    encode_plain(text, true, ids);
  } else {
    for (const TextSegment& seg : added_.raw_matcher().split(text)) {
      if (seg.token_id >= 0) ids.push_back(seg.token_id);
      else encode_plain(seg.text, seg.offset == 0, ids);
    }
  }
  if (max_tokens > 0) {
    const size_t budget = static_cast<size_t>(content_budget(max_tokens, add_special_tokens, /*pair=*/false));
    if (ids.size() > budget) ids.resize(budget);
  }
  if (add_special_tokens) post_processor_.apply(ids);
  return ids;
}

void Tokenizer::encode_plain(std::string_view text, bool at_start, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  std::string normalized;
  if (!normalizer_.empty()) {
    normalized = normalizer_.normalize(text);
    text = normalized;
  }
  if (added_.normalized_matcher().empty()) {
    encode_normalized(text, at_start, ids);
    return;
  }
  for (const TextSegment& seg : added_.normalized_matcher().split(text)) {
    if (seg.token_id >= 0) ids.push_back(seg.token_id);
    else encode_normalized(seg.text, at_start && seg.offset == 0, ids);
  }
}

void Tokenizer::encode_normalized(std::string_view text, bool at_start, std::vector<int32_t>& ids) const {
  if (text.empty()) return;
  if (pre_tokenizer_.empty()) {
    model_->encode(text, ids);
    return;
  }
  thread_local std::vector<Piece> pieces;
  pieces.clear();
  pre_tokenizer_.pre_tokenize(text, at_start, pieces);
  for (const Piece& piece : pieces) model_->encode(piece.text, ids);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab_size()) continue;
    if (skip_special_tokens && is_special(id)) continue;
    if (const AddedToken* added = added_.find(id)) tokens.push_back(added->content);
    else if (!token_strings_[id].empty()) tokens.push_back(token_strings_[id]);
  }
  return decoder_.decode(std::move(tokens));
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* added = added_.find(id)) return added->content;
  if (id < 0 || id >= vocab_size() || token_strings_[id].empty()) return std::nullopt;
  return token_strings_[id];
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  const auto it = token_index_.find(token);
  if (it == token_index_.end()) return std::nullopt;
  return it->second;
}

bool Tokenizer::is_special(int32_t id) const {
  const AddedToken* added = added_.find(id);
  return added != nullptr && added->special;
}

}  // namespace strata::text
