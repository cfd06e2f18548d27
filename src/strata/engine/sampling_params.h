// Per-request sampling parameters, with the ranges the server validates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace strata {

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

  bool greedy() const { return temperature <= 0.0f || top_k == 1; }
  // Penalties read the tokens generated so far, so the newest one must be on the host.
  bool has_penalties() const {
    return repetition_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f;
  }
  // Error text when a value is out of range, or nullopt; the server turns it into a 400.
  std::optional<std::string> validate() const;
};

}  // namespace strata
