// What the prefix-cache benchmarks send through the real engine: synthetic prompt ids and one
// greedy request at a time, timed to its first token.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "strata/engine/engine.h"

namespace strata {

struct RequestResult {
  double ttft_ms = 0;
  int32_t cached_tokens = 0;
  std::vector<int32_t> output_ids;
};

// Ids in [5, vocab - 5), a different sequence for each seed.
inline std::vector<int32_t> make_ids(int32_t count, int32_t seed, int32_t vocab) {
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < count; ++i) ids.push_back((seed * 7919 + i * 131 + 11) % (vocab - 10) + 5);
  return ids;
}

inline RequestResult run_request(Engine& engine, std::vector<int32_t> prompt, int32_t output_tokens) {
  const auto start = std::chrono::steady_clock::now();
  auto stream = engine.submit({.prompt_ids = std::move(prompt), .sampling = {.temperature = 0},
                               .max_tokens = output_tokens, .ignore_eos = true});
  RequestResult result;
  bool first = true;
  while (auto update = stream->pop(std::chrono::minutes(10))) {
    for (const ChoiceDelta& d : update->deltas) {
      if (first && !d.token_ids.empty()) {
        result.ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        first = false;
      }
      result.output_ids.insert(result.output_ids.end(), d.token_ids.begin(), d.token_ids.end());
    }
    result.cached_tokens = update->num_cached_tokens;
    if (update->finished) break;
  }
  return result;
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace strata
