// Sampling flags shared by `generate` and `chat`.
#pragma once

#include <CLI/CLI.hpp>

#include "strata/engine/sampling_params.h"

namespace strata::cli {

struct SamplingFlags {
  int32_t max_tokens = 64;
  float temperature = 0.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int64_t seed = -1;
  bool ignore_eos = false;
};

void add_sampling_flags(CLI::App& command, SamplingFlags& flags);
// Throws an Error naming the flag when a value is out of range.
SamplingParams to_sampling_params(const SamplingFlags& flags);

}  // namespace strata::cli
