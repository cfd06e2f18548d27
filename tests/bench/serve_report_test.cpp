#include "strata/bench/serve_report.h"

#include <gtest/gtest.h>

#include <set>

#include "strata/bench/serve_metrics.h"
#include "strata/core/error.h"

namespace strata::bench {
namespace {

// Two answers (times exact in binary) and one failure, over a 2 s run.
std::vector<RequestOutput> outputs() {
  return {
      {.success = true, .generated_text = "abcde", .prompt_len = 10, .output_tokens = 5, .start_s = 0,
       .ttft_s = 0.125, .latency_s = 0.625, .itl_s = {0.125, 0.125, 0.125, 0.125}},
      {.success = true, .generated_text = "xy", .prompt_len = 20, .output_tokens = 0,  // no usage: 2 arrivals
       .start_s = 0.5, .ttft_s = 0.25, .latency_s = 0.75, .itl_s = {0.5}},
      {.success = false, .error = "HTTP 500", .prompt_len = 40},
  };
}

const MetricOptions kP99{.percentiles = {99}};

TEST(ServeMetrics, ComputedAsVllmComputesThem) {
  const ServeMetrics m = calculate_metrics(outputs(), 2.0, kP99);
  EXPECT_EQ(m.completed, 2);
  EXPECT_EQ(m.failed, 1);
  EXPECT_EQ(m.total_input, 30);
  EXPECT_EQ(m.total_output, 7);
  EXPECT_EQ(m.output_lens, (std::vector<int64_t>{5, 2, 0}));
  EXPECT_DOUBLE_EQ(m.request_throughput, 1.0);
  EXPECT_DOUBLE_EQ(m.output_throughput, 3.5);
  EXPECT_DOUBLE_EQ(m.total_token_throughput, 18.5);
  EXPECT_DOUBLE_EQ(m.ttft_ms.mean, 187.5);
  EXPECT_DOUBLE_EQ(m.ttft_ms.percentiles[0].second, 248.75);
  EXPECT_DOUBLE_EQ(m.tpot_ms.mean, (125.0 + 500.0) / 2);  // (latency - ttft) / (tokens - 1)
  EXPECT_DOUBLE_EQ(m.itl_ms.mean, 200.0);
  EXPECT_DOUBLE_EQ(m.itl_ms.median, 125.0);
  EXPECT_DOUBLE_EQ(m.e2el_ms.mean, 687.5);
  EXPECT_EQ(m.max_output_tokens_per_s, 6);  // five of the first and one of the second in second 0
  EXPECT_EQ(m.max_concurrent_requests, 2);
}

TEST(ServeMetrics, GoodputCountsRequestsWithinEveryObjective) {
  EXPECT_FALSE(calculate_metrics(outputs(), 2.0, kP99).request_goodput);
  // The first answer: TTFT 125 ms, TPOT 125 ms, E2E 625 ms; the second: 250, 500, 750.
  const auto goodput = [](std::vector<std::string> pairs) {
    return *calculate_metrics(outputs(), 2.0, {.goodput = parse_goodput(pairs)}).request_goodput;
  };
  EXPECT_DOUBLE_EQ(goodput({"ttft:250"}), 1.0);  // both, over 2 s
  EXPECT_DOUBLE_EQ(goodput({"ttft:250", "tpot:200"}), 0.5);
  EXPECT_DOUBLE_EQ(goodput({"e2el:600"}), 0.0);
  EXPECT_THROW(goodput({"ttft"}), Error);
  EXPECT_THROW(goodput({"itl:5"}), Error);
  EXPECT_THROW(goodput({"ttft:5ms"}), Error);
}

TEST(ServeReport, PrintsVllmsLayout) {
  const ServeMetrics m = calculate_metrics(outputs(), 2.0, kP99);
  const std::string text =
      format_serve_result(m, 2.0, {.max_concurrency = 4, .request_rate = INFINITY, .percentile_metrics = {"ttft", "tpot"}});
  EXPECT_TRUE(text.starts_with("============ Serving Benchmark Result ============\n")) << text;
  EXPECT_NE(text.find("Successful requests:                     2         \n"), std::string::npos) << text;
  EXPECT_NE(text.find("Maximum request concurrency:             4         \n"), std::string::npos);
  EXPECT_EQ(text.find("Request rate configured"), std::string::npos);  // not for inf
  EXPECT_NE(text.find("Total Token throughput (tok/s):          18.50     \n"), std::string::npos);
  EXPECT_NE(text.find("---------------Time to First Token----------------\n"), std::string::npos);
  EXPECT_NE(text.find("-----Time per Output Token (excl. 1st token)------\n"), std::string::npos);
  EXPECT_NE(text.find("P99 TTFT (ms):                           248.75    \n"), std::string::npos);
  EXPECT_EQ(text.find("Inter-token Latency"), std::string::npos);  // not asked for
  EXPECT_TRUE(text.ends_with(std::string(50, '=') + "\n"));
  const std::string paced = format_serve_result(m, 2.0, {.request_rate = 2.5});
  EXPECT_NE(paced.find("Request rate configured (RPS):           2.50      \n"), std::string::npos) << paced;
  EXPECT_EQ(paced.find("Request goodput"), std::string::npos);
  const ServeMetrics good = calculate_metrics(outputs(), 2.0, {.goodput = {.ttft_ms = 200}});
  EXPECT_NE(format_serve_result(good, 2.0, {.request_rate = 1}).find("Request goodput (req/s):                 0.50      \n"),
            std::string::npos);
  EXPECT_EQ(paced.find("Maximum request concurrency"), std::string::npos);
}

std::set<std::string> keys(const nlohmann::json& j) {
  std::set<std::string> k;
  for (const auto& [key, value] : j.items()) k.insert(key);
  return k;
}

TEST(ServeReport, ResultJsonHasVllmsKeys) {
  const std::vector<RequestOutput> out = outputs();
  const ServeMetrics m = calculate_metrics(out, 2.0, kP99);
  const ServeReportOptions options{.request_rate = INFINITY, .percentile_metrics = {"ttft", "itl"}};
  const nlohmann::json r = serve_result_json(m, out, 2.0, options);
  const std::set<std::string> expected = {
      "duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
      "request_goodput", "output_throughput", "total_token_throughput", "max_output_tokens_per_s",
      "max_concurrent_requests", "mean_ttft_ms", "median_ttft_ms", "std_ttft_ms", "p99_ttft_ms", "mean_itl_ms",
      "median_itl_ms", "std_itl_ms", "p99_itl_ms"};
  EXPECT_EQ(keys(r), expected);
  EXPECT_EQ(r["completed"], 2);
  EXPECT_DOUBLE_EQ(r["p99_ttft_ms"].get<double>(), 248.75);
  ServeReportOptions detailed = options;
  detailed.detailed = true;
  const nlohmann::json d = serve_result_json(m, out, 2.0, detailed);
  for (const char* key : {"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"})
    EXPECT_EQ(d.at(key).size(), 3u) << key;
  EXPECT_EQ(d["errors"][2], "HTTP 500");
}

TEST(ServeReport, FlagListsParseOrNameTheBadEntry) {
  EXPECT_EQ(parse_percentile_metrics("ttft,e2el"), (std::vector<std::string>{"ttft", "e2el"}));
  EXPECT_EQ(parse_metric_percentiles("25,50,99.9"), (std::vector<double>{25, 50, 99.9}));
  EXPECT_THROW(parse_percentile_metrics("ttft,latency"), Error);
  EXPECT_THROW(parse_metric_percentiles("50,101"), Error);
  EXPECT_THROW(parse_metric_percentiles("p99"), Error);
}

}  // namespace
}  // namespace strata::bench
