// One streamed request of `strata bench serve`: the OpenAI body vLLM's benchmark sends
// (temperature 0, max tokens, stream with usage), and when each token arrived. A chunk
// counts as a token arrival when it carries text, so a role-only first chunk or a separate
// finish chunk does not shorten TTFT or ITL.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
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

// A keep-alive connection to the server (reconnecting when the server closed it), used by one
// request at a time: connections stay at the requests in flight, as with vLLM's pooled client,
// rather than a new one per request, which the server may not have seen closed yet.
class ServeClient {
 public:
  explicit ServeClient(const std::string& base_url);
  ~ServeClient();

  // Never throws: a failed request comes back with success false and the reason in error.
  RequestOutput send(const ServeEndpoint& endpoint, const BenchRequest& request,
                     std::chrono::steady_clock::time_point bench_start);

 private:
  struct Connection;
  std::unique_ptr<Connection> connection_;
};

// Idle keep-alive clients of one server; a request takes one (a new one when none is idle)
// and gives it back before its concurrency slot, so connections never outnumber the slots.
class ClientPool {
 public:
  explicit ClientPool(std::string base_url) : base_url_(std::move(base_url)) {}
  std::unique_ptr<ServeClient> take();
  void give_back(std::unique_ptr<ServeClient> client);

 private:
  std::string base_url_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<ServeClient>> idle_;
};

}  // namespace strata::bench
