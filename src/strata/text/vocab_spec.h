// A tokenizer described the way GGUF metadata describes it (tokenizer.ggml.*), so the GGUF
// reader can build the same Tokenizer as tokenizer.json gives. Two model kinds:
// "gpt2" (byte-level BPE with merges) and "llama" (SentencePiece BPE: scores, byte fallback).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata::text {

// GGUF's tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0, kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

struct VocabSpec {
  std::string model = "gpt2";         // tokenizer.ggml.model: "gpt2" or "llama"
  std::string pre = "default";        // tokenizer.ggml.pre (gpt2 only): split-regex flavour
  std::vector<std::string> tokens;    // tokenizer.ggml.tokens, index = id
  std::vector<std::string> merges;    // tokenizer.ggml.merges, "left right"; llama: optional
  std::vector<float> scores;          // tokenizer.ggml.scores (llama: merge priority)
  std::vector<int32_t> token_types;   // tokenizer.ggml.token_type; empty = all normal
  std::optional<int32_t> bos_id, eos_id, pad_id, unk_id;
  bool add_bos = false, add_eos = false;
  bool add_space_prefix = true;       // tokenizer.ggml.add_space_prefix (llama)
  std::string chat_template;          // tokenizer.chat_template
};

// The split regexes llama.cpp uses for a tokenizer.ggml.pre value, applied in order (each
// an Isolated split). Throws strata::Error for flavours Strata does not know.
std::vector<std::string> pre_tokenizer_regexes(const std::string& pre);

// Merges a SentencePiece BPE vocabulary implies: every split of a normal token into two
// tokens, ordered by the merged token's score (highest first), as transformers derives them.
std::vector<std::pair<int32_t, int32_t>> merges_from_scores(const VocabSpec& spec);

}  // namespace strata::text
