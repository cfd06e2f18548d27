#include "strata/engine/sampling_params.h"

#include <cmath>

#include <fmt/format.h>

namespace strata {

std::optional<std::string> SamplingParams::validate() const {
  if (!(temperature >= 0.0f) || !std::isfinite(temperature))
    return fmt::format("temperature must be >= 0, got {}", temperature);
  if (top_k < -1) return fmt::format("top_k must be -1, 0 or positive, got {}", top_k);
  if (!(top_p > 0.0f && top_p <= 1.0f)) return fmt::format("top_p must be in (0, 1], got {}", top_p);
  if (!(min_p >= 0.0f && min_p <= 1.0f)) return fmt::format("min_p must be in [0, 1], got {}", min_p);
  if (!(repetition_penalty > 0.0f) || !std::isfinite(repetition_penalty))
    return fmt::format("repetition_penalty must be > 0, got {}", repetition_penalty);
  if (!(presence_penalty >= -2.0f && presence_penalty <= 2.0f))
    return fmt::format("presence_penalty must be in [-2, 2], got {}", presence_penalty);
  if (!(frequency_penalty >= -2.0f && frequency_penalty <= 2.0f))
    return fmt::format("frequency_penalty must be in [-2, 2], got {}", frequency_penalty);
  if (logprobs > 20) return fmt::format("logprobs must be at most 20, got {}", logprobs);
  if (logit_bias.size() > kMaxLogitBiasTokens)
    return fmt::format("logit_bias may name at most {} tokens, got {}", kMaxLogitBiasTokens, logit_bias.size());
  for (const LogitBias& b : logit_bias)
    if (b.token_id < 0 || !(b.bias >= -100.0f && b.bias <= 100.0f))
      return fmt::format("logit_bias: token {} with bias {}; ids must be >= 0 and biases in [-100, 100]", b.token_id,
                         b.bias);
  return std::nullopt;
}

}  // namespace strata
