#include "strata/bench/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "strata/core/error.h"

namespace strata::bench {
namespace {

int64_t output_len(const RequestOutput& out, const text::Tokenizer* tokenizer) {
  if (out.output_tokens > 0) return out.output_tokens;
  if (tokenizer != nullptr) return std::ssize(tokenizer->encode(out.generated_text, false));
  return std::ssize(out.itl_s) + 1;
}

std::vector<double> in_ms(const std::vector<double>& seconds) {
  std::vector<double> ms;
  for (double s : seconds) ms.push_back(s * 1e3);
  return ms;
}

// Peak tokens per one-second bucket and peak requests active in a bucket, counted from the
// earliest successful start.
void set_peaks(std::span<const RequestOutput> outputs, ServeMetrics& m) {
  double first = INFINITY, last = -INFINITY;
  for (const RequestOutput& o : outputs) {
    if (!o.success) continue;
    first = std::min(first, o.start_s);
    last = std::max(last, o.start_s + o.latency_s);
  }
  if (std::isinf(first)) return;
  const auto num_buckets = static_cast<size_t>(std::ceil(last - first)) + 1;
  std::vector<double> tokens(num_buckets, 0), active(num_buckets, 0);
  const auto bucket = [&](double t) { return static_cast<size_t>(std::max(0.0, t - first)); };
  for (const RequestOutput& o : outputs) {
    if (!o.success) continue;
    double t = o.start_s + o.ttft_s;
    if (bucket(t) < num_buckets) ++tokens[bucket(t)];
    for (double gap : o.itl_s)
      if (bucket(t += gap) < num_buckets) ++tokens[bucket(t)];
    for (size_t s = bucket(o.start_s); s <= bucket(o.start_s + o.latency_s) && s < num_buckets; ++s) ++active[s];
  }
  m.max_output_tokens_per_s = *std::max_element(tokens.begin(), tokens.end());
  m.max_concurrent_requests = *std::max_element(active.begin(), active.end());
}

// TPOT of a one-token answer counts as 0 here, as vLLM's goodput takes it.
bool meets(const GoodputSlo& slo, const RequestOutput& o, int64_t len) {
  const double tpot_s = len > 1 ? (o.latency_s - o.ttft_s) / static_cast<double>(len - 1) : 0.0;
  return (!slo.ttft_ms || o.ttft_s * 1e3 <= *slo.ttft_ms) && (!slo.tpot_ms || tpot_s * 1e3 <= *slo.tpot_ms) &&
         (!slo.e2el_ms || o.latency_s * 1e3 <= *slo.e2el_ms);
}

}  // namespace

GoodputSlo parse_goodput(std::span<const std::string> pairs) {
  GoodputSlo slo;
  for (const std::string& pair : pairs) {
    const size_t colon = pair.find(':');
    const std::string name = pair.substr(0, colon);
    size_t used = 0;
    double ms = -1;
    try {
      if (colon != std::string::npos) ms = std::stod(pair.substr(colon + 1), &used);
    } catch (const std::exception&) {
    }
    std::optional<double>* target = name == "ttft" ? &slo.ttft_ms : name == "tpot" ? &slo.tpot_ms
                                  : name == "e2el" ? &slo.e2el_ms : nullptr;
    if (target == nullptr || used == 0 || used != pair.size() - colon - 1 || !(ms >= 0))
      fail("--goodput: '{}' is not an objective; give ttft:MS, tpot:MS or e2el:MS (milliseconds, >= 0)", pair);
    *target = ms;
  }
  return slo;
}

ServeMetrics calculate_metrics(std::span<const RequestOutput> outputs, double duration_s, const MetricOptions& options) {
  const text::Tokenizer* tokenizer = options.tokenizer;
  const std::span<const double> percentiles = options.percentiles;
  int64_t num_good = 0;
  ServeMetrics m;
  std::vector<double> ttfts, tpots, itls, e2els;
  for (const RequestOutput& o : outputs) {
    if (!o.success) {
      m.output_lens.push_back(0);
      ++m.failed;
      continue;
    }
    const int64_t len = output_len(o, tokenizer);
    m.output_lens.push_back(len);
    m.total_input += o.prompt_len;
    m.total_output += len;
    if (len > 1) tpots.push_back((o.latency_s - o.ttft_s) / static_cast<double>(len - 1));
    itls.insert(itls.end(), o.itl_s.begin(), o.itl_s.end());
    ttfts.push_back(o.ttft_s);
    e2els.push_back(o.latency_s);
    ++m.completed;
    if (options.goodput.any() && meets(options.goodput, o, len)) ++num_good;
  }
  if (options.goodput.any()) m.request_goodput = duration_s > 0 ? static_cast<double>(num_good) / duration_s : 0.0;
  if (duration_s > 0) {
    m.request_throughput = static_cast<double>(m.completed) / duration_s;
    m.output_throughput = static_cast<double>(m.total_output) / duration_s;
    m.total_token_throughput = static_cast<double>(m.total_input + m.total_output) / duration_s;
  }
  m.ttft_ms = summarize(in_ms(ttfts), percentiles);
  m.tpot_ms = summarize(in_ms(tpots), percentiles);
  m.itl_ms = summarize(in_ms(itls), percentiles);
  m.e2el_ms = summarize(in_ms(e2els), percentiles);
  set_peaks(outputs, m);
  return m;
}

}  // namespace strata::bench
