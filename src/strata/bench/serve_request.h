// One streamed request of `strata bench serve`: the OpenAI body vLLM's benchmark sends
// (temperature 0, max tokens, stream with usage), and when each token arrived. A chunk
// counts as a token arrival when it carries text, so a role-only first chunk or a separate
// finish chunk does not shorten TTFT or ITL.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/bench/bench_dataset.h"

namespace strata::bench {

struct ServeEndpoint {
  std::string base_url;  // http://host:port, optionally with a path prefix
  std::string endpoint;  // /v1/completions or /v1/chat/completions
  std::string model;     // the request's "model"
  bool ignore_eos = false;
  double temperature = 0.0;
};

bool is_chat_endpoint(const std::string& endpoint);

struct RequestOutput {
  bool success = false;
  std::string error;
  std::string generated_text;
  int64_t prompt_len = 0;
  int64_t output_tokens = 0;  // the server's usage.completion_tokens; 0 when it sent none
  double start_s = 0;         // from the benchmark's start
  double ttft_s = 0, latency_s = 0;
  std::vector<double> itl_s;  // gaps between token arrivals after the first
};

std::string request_body(const ServeEndpoint& endpoint, const BenchRequest& request);

// Folds one SSE data payload received at now_s (seconds since the request's start) into
// out; last_token_s is the previous arrival (negative before the first).
void observe_chunk(std::string_view data, double now_s, RequestOutput& out, double& last_token_s);

// Never throws: a failed request comes back with success false and the reason in error.
RequestOutput send_request(const ServeEndpoint& endpoint, const BenchRequest& request,
                           std::chrono::steady_clock::time_point bench_start);

}  // namespace strata::bench
