// What `strata bench serve` prints and saves, in `vllm bench serve`'s layout and key names,
// so scripts written for vLLM's result files read ours.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "strata/bench/serve_metrics.h"
#include "strata/bench/serve_request.h"

namespace strata::bench {

struct ServeReportOptions {
  std::optional<int64_t> max_concurrency;
  double request_rate = 0;                     // +inf: all at once
  std::vector<std::string> percentile_metrics;  // of ttft, tpot, itl, e2el
  bool detailed = false;                        // per-request lists in the JSON
};

// "ttft,tpot,itl" -> its names; an Error names an unknown one.
std::vector<std::string> parse_percentile_metrics(const std::string& list);
// "25,50,99" -> {25, 50, 99}; an Error names a value outside [0, 100].
std::vector<double> parse_metric_percentiles(const std::string& list);

std::string format_serve_result(const ServeMetrics& metrics, double duration_s, const ServeReportOptions& options);

nlohmann::json serve_result_json(const ServeMetrics& metrics, std::span<const RequestOutput> outputs,
                                 double duration_s, const ServeReportOptions& options);

}  // namespace strata::bench
