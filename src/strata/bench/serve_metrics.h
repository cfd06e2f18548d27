// The figures of a serving benchmark, computed from what each request saw as `vllm bench
// serve` computes them: TPOT = (E2E latency - TTFT) / (output tokens - 1) over requests with
// more than one token, ITL over every gap, throughputs over the whole run's duration, and
// peaks from one-second buckets of token arrivals and of requests in flight. Goodput counts
// the requests within every service-level objective given (vLLM's --goodput).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "strata/bench/metric_summary.h"
#include "strata/bench/serve_request.h"
#include "strata/text/tokenizer.h"

namespace strata::bench {

struct ServeMetrics {
  int64_t completed = 0, failed = 0;
  int64_t total_input = 0, total_output = 0;
  double request_throughput = 0, output_throughput = 0, total_token_throughput = 0;
  double max_output_tokens_per_s = 0, max_concurrent_requests = 0;
  std::optional<double> request_goodput;  // good requests per second; only with objectives
  std::vector<int64_t> output_lens;  // per request; 0 for a failed one
  MetricSummary ttft_ms, tpot_ms, itl_ms, e2el_ms;
};

// Service-level objectives in milliseconds; a request is good when it meets every one given.
struct GoodputSlo {
  std::optional<double> ttft_ms, tpot_ms, e2el_ms;
  bool any() const { return ttft_ms || tpot_ms || e2el_ms; }
};

// "ttft:500 tpot:50" pairs (vLLM's --goodput); an Error names a bad one.
GoodputSlo parse_goodput(std::span<const std::string> pairs);

struct MetricOptions {
  std::vector<double> percentiles;                 // of each latency metric, in [0, 100]
  const text::Tokenizer* tokenizer = nullptr;      // counts output tokens where usage is missing
  GoodputSlo goodput;
};

// Output tokens come from the server's usage; without it from the tokenizer (when given)
// re-encoding the text, else one per token arrival.
ServeMetrics calculate_metrics(std::span<const RequestOutput> outputs, double duration_s, const MetricOptions& options);

}  // namespace strata::bench
