// Text <-> token ids for the BPE tokenizers LLMs ship: byte-level BPE (GPT-2, Llama 3, Qwen,
// DeepSeek) and SentencePiece-style BPE with byte fallback (Llama 2, Mistral), and BERT's
// WordPiece. Built from a
// Hugging Face tokenizer.json (+ tokenizer_config.json beside it) or from GGUF vocabulary
// metadata; encodings match Hugging Face tokenizers exactly. Immutable and thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/text/tokenizer_parts.h"

namespace strata::text {

struct VocabSpec;

class Tokenizer {
 public:
  // `path` is a tokenizer.json or a folder holding one; tokenizer_config.json beside it is
  // read when present. Throws strata::Error naming the file and problem.
  static std::unique_ptr<Tokenizer> from_file(const std::string& path);
  static std::unique_ptr<Tokenizer> from_vocab(const VocabSpec& spec);
  explicit Tokenizer(TokenizerParts parts);

  // Added tokens written in the text (special or not) are always matched. With
  // add_special_tokens the post-processor's tokens (bos/eos) are added, as tokenizer.json
  // says. Ill-formed UTF-8: byte-level tokenizers encode the raw bytes (decode gives them
  // back); SentencePiece-style ones first replace each ill-formed subpart with U+FFFD.
  // max_tokens > 0: at most that many ids, special tokens included, as Hugging Face's
  // truncation=True with max_length: the text's end is cut and the special tokens kept; a pair
  // loses tokens from the longer text, one at a time (longest_first, the second on a tie). Throws
  // an Error when the special tokens alone take max_tokens.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens, int64_t max_tokens = 0) const;
  // Two texts as one sequence (a cross-encoder's query and document), through the
  // post-processor's pair template when add_special_tokens. type_ids, when given, gets each
  // id's segment (0 for a, 1 for b, the template's for its tokens), as BERT reads them.
  std::vector<int32_t> encode_pair(std::string_view a, std::string_view b, bool add_special_tokens,
                                   std::vector<int32_t>* type_ids = nullptr, int64_t max_tokens = 0) const;
  // Ids outside the vocabulary are skipped; text that is not valid UTF-8 after decoding
  // has U+FFFD in place of the broken bytes.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens) const;

  std::optional<std::string> id_to_token(int32_t id) const;  // vocabulary spelling
  std::optional<int32_t> token_to_id(std::string_view token) const;
  int32_t vocab_size() const { return static_cast<int32_t>(token_strings_.size()); }
  bool is_special(int32_t id) const;

  std::optional<int32_t> bos_id() const { return bos_id_; }
  std::optional<int32_t> eos_id() const { return eos_id_; }
  std::optional<int32_t> pad_id() const { return pad_id_; }
  const TokenizerConfig& config() const { return config_; }
  const std::string& chat_template() const { return config_.chat_template; }
  // Replaces tokenizer_config.json's template (strata serve --chat-template), before the tokenizer is shared.
  void set_chat_template(std::string chat_template) { config_.chat_template = std::move(chat_template); }
  const std::vector<AddedToken>& added_tokens() const { return added_.tokens(); }

 private:
  void encode_plain(std::string_view text, bool at_start, std::vector<int32_t>& ids) const;
  void encode_normalized(std::string_view text, bool at_start, std::vector<int32_t>& ids) const;
  std::optional<int32_t> resolve(const std::optional<std::string>& token) const;
  // max_tokens less the special tokens add_special_tokens puts around one text or a pair.
  int64_t content_budget(int64_t max_tokens, bool add_special_tokens, bool pair) const;

  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::unique_ptr<TokenModel> model_;
  std::vector<std::string> token_strings_;
  TokenIndex token_index_;  // spelling -> id, added tokens first
  AddedVocabulary added_;
  PostProcessor post_processor_;
  TokenDecoder decoder_;
  TokenizerConfig config_;
  std::optional<int32_t> bos_id_, eos_id_, pad_id_;
};

}  // namespace strata::text
