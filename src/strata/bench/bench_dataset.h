// The prompts a benchmark sends, sampled as vLLM's benchmark datasets sample them:
// `random` (token ids, decoded to text when a tokenizer is at hand) and `sharegpt` (the
// first two turns of ShareGPT conversations). A seed gives the same requests every time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/text/tokenizer.h"

namespace strata::bench {

struct BenchRequest {
  std::string prompt;               // text, sent when not empty
  std::vector<int32_t> prompt_ids;  // the tokens; sent instead of text when there is none
  int64_t prompt_len = 0;
  int64_t expected_output_len = 0;
};

struct RandomDatasetOptions {
  int64_t num_requests = 0;
  int64_t input_len = 1024;
  int64_t output_len = 128;
  double range_ratio = 0.0;  // lengths uniform in [len * (1 - r), len * (1 + r)]
  int64_t prefix_len = 0;    // random tokens every prompt starts with
  uint64_t seed = 0;
};

// Consecutive ids from a random offset (vLLM's scheme). With a tokenizer, special ids are
// left out and the ids go through decode, encode and decode so text and prompt_len agree;
// without one (null) the ids are drawn from [0, vocab_size) and no text is made.
std::vector<BenchRequest> sample_random_requests(const RandomDatasetOptions& options,
                                                 const text::Tokenizer* tokenizer, int64_t vocab_size);

struct ShareGptOptions {
  std::string path;  // a JSON list of {"conversations": [{"value": ...}, {"value": ...}, ...]}
  int64_t num_requests = 0;
  std::optional<int64_t> output_len;  // default: the reply's own length
  uint64_t seed = 0;
};

// Shuffled with the seed; pairs with a prompt or reply under 4 tokens, a prompt over 1024
// or both over 2048 are skipped; too few valid pairs are topped up by repeats.
std::vector<BenchRequest> sample_sharegpt_requests(const ShareGptOptions& options, const text::Tokenizer& tokenizer);

}  // namespace strata::bench
