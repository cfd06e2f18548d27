#include "strata/engine/prompt_truncation.h"

#include "strata/core/error.h"

namespace strata {

int64_t truncation_max_tokens(std::optional<int64_t> truncate_prompt_tokens, int64_t max_model_len) {
  if (!truncate_prompt_tokens) return 0;
  const int64_t value = *truncate_prompt_tokens;
  if (value == -1) return max_model_len;
  if (value < 1)
    fail("truncate_prompt_tokens is {}; give -1 (cut to the model's limit of {} tokens) or a count from 1 to {}",
         value, max_model_len, max_model_len);
  if (value > max_model_len)
    fail("truncate_prompt_tokens value ({}) is greater than max_model_len ({}); select a smaller truncation size or "
         "-1 for the model's limit", value, max_model_len);
  return value;
}

std::vector<int32_t> keep_last_tokens(std::vector<int32_t> ids, int64_t max_tokens) {
  if (max_tokens <= 0 || static_cast<int64_t>(ids.size()) <= max_tokens) return ids;
  return {ids.end() - max_tokens, ids.end()};
}

}  // namespace strata
