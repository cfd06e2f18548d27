#include "strata/bench/serve_report.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <sstream>

#include "strata/core/error.h"

namespace strata::bench {
namespace {

struct MetricName {
  const char* key;     // ttft
  const char* label;   // TTFT
  const char* header;  // Time to First Token
  MetricSummary ServeMetrics::*summary;
};

constexpr std::array<MetricName, 4> kMetrics = {{
    {"ttft", "TTFT", "Time to First Token", &ServeMetrics::ttft_ms},
    {"tpot", "TPOT", "Time per Output Token (excl. 1st token)", &ServeMetrics::tpot_ms},
    {"itl", "ITL", "Inter-token Latency", &ServeMetrics::itl_ms},
    {"e2el", "E2EL", "End-to-end Latency", &ServeMetrics::e2el_ms},
}};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// 99 -> "99", 99.9 -> "99.9", as Python prints them.
std::string percentile_word(double p) { return p == std::floor(p) ? fmt::format("{}", static_cast<int64_t>(p)) : fmt::format("{}", p); }

bool selected(const ServeReportOptions& options, const char* key) {
  return std::find(options.percentile_metrics.begin(), options.percentile_metrics.end(), key) !=
         options.percentile_metrics.end();
}

}  // namespace

std::vector<std::string> parse_percentile_metrics(const std::string& list) {
  std::vector<std::string> names = split(list);
  for (const std::string& name : names)
    if (std::none_of(kMetrics.begin(), kMetrics.end(), [&](const MetricName& m) { return name == m.key; }))
      fail("--percentile-metrics: unknown metric '{}'; choose from ttft, tpot, itl, e2el", name);
  return names;
}

std::vector<double> parse_metric_percentiles(const std::string& list) {
  std::vector<double> values;
  for (const std::string& item : split(list)) {
    size_t used = 0;
    double p = -1;
    try {
      p = std::stod(item, &used);
    } catch (const std::exception&) {
    }
    if (used != item.size() || !(p >= 0 && p <= 100))
      fail("--metric-percentiles: '{}' is not a percentile; give numbers in [0, 100] like 25,50,99", item);
    values.push_back(p);
  }
  return values;
}

std::string format_serve_result(const ServeMetrics& m, double duration_s, const ServeReportOptions& options) {
  std::string s = fmt::format("{:=^50}\n", " Serving Benchmark Result ");
  const auto line = [&s](const std::string& name, const std::string& value) { s += fmt::format("{:<40} {:<10}\n", name, value); };
  const auto real = [](double v) { return fmt::format("{:.2f}", v); };
  line("Successful requests:", std::to_string(m.completed));
  line("Failed requests:", std::to_string(m.failed));
  if (options.max_concurrency) line("Maximum request concurrency:", std::to_string(*options.max_concurrency));
  if (!std::isinf(options.request_rate)) line("Request rate configured (RPS):", real(options.request_rate));
  line("Benchmark duration (s):", real(duration_s));
  line("Total input tokens:", std::to_string(m.total_input));
  line("Total generated tokens:", std::to_string(m.total_output));
  line("Request throughput (req/s):", real(m.request_throughput));
  if (m.request_goodput) line("Request goodput (req/s):", real(*m.request_goodput));
  line("Output token throughput (tok/s):", real(m.output_throughput));
  line("Peak output token throughput (tok/s):", real(m.max_output_tokens_per_s));
  line("Peak concurrent requests:", real(m.max_concurrent_requests));
  line("Total Token throughput (tok/s):", real(m.total_token_throughput));
  for (const MetricName& metric : kMetrics) {
    if (!selected(options, metric.key)) continue;
    const MetricSummary& summary = m.*metric.summary;
    s += fmt::format("{:-^50}\n", metric.header);
    line(fmt::format("Mean {} (ms):", metric.label), real(summary.mean));
    line(fmt::format("Median {} (ms):", metric.label), real(summary.median));
    for (const auto& [p, value] : summary.percentiles)
      line(fmt::format("P{} {} (ms):", percentile_word(p), metric.label), real(value));
  }
  s += std::string(50, '=') + "\n";
  return s;
}

nlohmann::json serve_result_json(const ServeMetrics& m, std::span<const RequestOutput> outputs, double duration_s,
                                 const ServeReportOptions& options) {
  nlohmann::json r{{"duration", duration_s},
                   {"completed", m.completed},
                   {"failed", m.failed},
                   {"total_input_tokens", m.total_input},
                   {"total_output_tokens", m.total_output},
                   {"request_throughput", m.request_throughput},
                   {"request_goodput", m.request_goodput ? nlohmann::json(*m.request_goodput) : nlohmann::json(nullptr)},
                   {"output_throughput", m.output_throughput},
                   {"total_token_throughput", m.total_token_throughput},
                   {"max_output_tokens_per_s", m.max_output_tokens_per_s},
                   {"max_concurrent_requests", m.max_concurrent_requests}};
  if (options.detailed) {
    for (const RequestOutput& o : outputs) {
      r["input_lens"].push_back(o.prompt_len);
      r["ttfts"].push_back(o.ttft_s);
      r["itls"].push_back(o.itl_s);
      r["generated_texts"].push_back(o.generated_text);
      r["errors"].push_back(o.error);
    }
    r["output_lens"] = m.output_lens;
  }
  for (const MetricName& metric : kMetrics) {
    if (!selected(options, metric.key)) continue;
    const MetricSummary& summary = m.*metric.summary;
    r[fmt::format("mean_{}_ms", metric.key)] = summary.mean;
    r[fmt::format("median_{}_ms", metric.key)] = summary.median;
    r[fmt::format("std_{}_ms", metric.key)] = summary.std;
    for (const auto& [p, value] : summary.percentiles) r[fmt::format("p{}_{}_ms", percentile_word(p), metric.key)] = value;
  }
  return r;
}

}  // namespace strata::bench
