// Per-request sampling parameters, with the ranges the server validates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace strata {

// OpenAI's logit_bias: `bias` is added to the token's logit before sampling.
struct LogitBias {
  int32_t token_id = 0;
  float bias = 0.0f;  // [-100, 100]; -100 in effect bans the token, +100 forces it
};
inline constexpr size_t kMaxLogitBiasTokens = 1024;  // per request

struct SamplingParams {
  float temperature = 1.0f;  // 0: greedy
  int32_t top_k = 0;         // 0 or -1: off
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;  // over prompt and output tokens (HF/vLLM semantics)
  float presence_penalty = 0.0f;    // over output tokens
  float frequency_penalty = 0.0f;   // over output tokens
  std::optional<uint64_t> seed;
  int32_t logprobs = -1;  // -1: none; n >= 0: the sampled token's logprob plus the top n
  std::vector<LogitBias> logit_bias;  // distinct token ids, below the vocabulary size

  bool greedy() const { return temperature <= 0.0f || top_k == 1; }
  // Penalties read the tokens generated so far, so the newest one must be on the host.
  bool has_penalties() const {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f;
  }
  // Error text when a value is out of range, or nullopt; the server turns it into a 400.
  std::optional<std::string> validate() const;
};

}  // namespace strata
