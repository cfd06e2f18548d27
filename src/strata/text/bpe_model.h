// The BPE model: splits one pre-tokenized piece into symbols (bytes for byte-level
// vocabularies, characters otherwise, with SentencePiece-style <0xXX> byte fallback or an
// unknown token) and applies ranked merges, lowest rank first, leftmost on ties, exactly as
// Hugging Face tokenizers' BPE does. A bounded per-word cache makes repeated words cheap.
#pragma once

#include <memory>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strata/text/token_model.h"

namespace strata::text {

struct BpeOptions {
  bool byte_level = false;     // symbols are raw bytes; token spellings are raw bytes
  bool byte_fallback = false;  // unknown characters become <0xXX> tokens
  bool fuse_unk = false;       // consecutive unknown characters share one unk token
  bool ignore_merges = false;  // a piece that is itself a token is not merged (Llama 3)
  int32_t unk_id = -1;         // -1: none (unknown characters are dropped)
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenIndex = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

class BpeModel final : public TokenModel {
 public:
  // tokens[id]: internal spelling of each id (raw bytes when byte_level); merges: (left,
  // right) id pairs in rank order. Throws Error when a merge's result is not a token.
  BpeModel(std::vector<std::string> tokens, const std::vector<std::pair<int32_t, int32_t>>& merges,
           const BpeOptions& options);
  ~BpeModel();

  void encode(std::string_view piece, std::vector<int32_t>& out) const override;
  bool byte_level() const override { return options_.byte_level; }
  std::optional<int32_t> token_to_id(std::string_view spelling) const;
  const std::string& spelling(int32_t id) const { return tokens_[id]; }
  int32_t num_tokens() const { return static_cast<int32_t>(tokens_.size()); }
  const BpeOptions& options() const { return options_; }

 private:
  struct PairMap;
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  void initial_symbols(std::string_view piece, std::vector<int32_t>& ids) const;
  void merge(std::vector<int32_t>& ids) const;

  std::vector<std::string> tokens_;
  TokenIndex index_;
  BpeOptions options_;
  std::unique_ptr<PairMap> merges_;  // owned; unique_ptr so a throwing constructor frees it
  // True when no token has "▁" right after another character: then no merge crosses the
  // start of a "▁" run, and long SentencePiece inputs are encoded word by word (cached).
  bool split_at_metaspace_ = false;
  int32_t byte_ids_[256];           // byte-level: token of each single byte; fallback: <0xXX>
  mutable std::mutex cache_mutex_;  // guards cache_
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace strata::text
