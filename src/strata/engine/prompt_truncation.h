// vLLM's truncate_prompt_tokens for pooling inputs (embeddings, scores, rerank): -1 cuts an input
// to the model's limit (max_model_len, which sentence-transformers' max_seq_length bounds), k >= 1
// to k tokens. Text is cut by the tokenizer (its end goes, the special tokens stay: see
// Tokenizer::encode); token ids keep their last k, as vLLM keeps them.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace strata {

// The most tokens an input may keep; 0: no truncation asked for (nullopt). Throws an Error for 0,
// a value below -1 or one above max_model_len.
int64_t truncation_max_tokens(std::optional<int64_t> truncate_prompt_tokens, int64_t max_model_len);

// The last max_tokens of ids (all of them when max_tokens is 0 or not fewer).
std::vector<int32_t> keep_last_tokens(std::vector<int32_t> ids, int64_t max_tokens);

}  // namespace strata
