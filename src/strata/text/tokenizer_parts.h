// What a Tokenizer is assembled from. tokenizer.json (hf_tokenizer_json.cpp) and GGUF
// metadata (vocab_spec.cpp) both produce these parts; Tokenizer only runs them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strata/text/added_vocabulary.h"
#include "strata/text/bpe_model.h"
#include "strata/text/normalizer.h"
#include "strata/text/post_processor.h"
#include "strata/text/pre_tokenizer.h"
#include "strata/text/token_decoder.h"

namespace strata::text {

// Settings that live beside the vocabulary (tokenizer_config.json or GGUF metadata).
struct TokenizerConfig {
  std::optional<std::string> bos_token, eos_token, pad_token, unk_token;
  std::optional<bool> add_bos_token, add_eos_token;  // as written; encode() follows the post-processor
  std::string chat_template;                         // empty when none
};

struct TokenizerParts {
  Normalizer normalizer;
  PreTokenizer pre_tokenizer;
  std::unique_ptr<TokenModel> model;  // BPE or WordPiece
  std::vector<std::string> token_strings;  // id -> vocabulary spelling (model and added tokens)
  AddedVocabulary added;
  PostProcessor post_processor;
  TokenDecoder decoder;
  TokenizerConfig config;
  std::optional<int32_t> bos_id, eos_id, pad_id;  // set directly by GGUF; else from config tokens
};

}  // namespace strata::text
