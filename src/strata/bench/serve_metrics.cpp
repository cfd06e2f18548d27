#include "strata/bench/serve_metrics.h"

#include <algorithm>
#include <cmath>

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

}  // namespace

ServeMetrics calculate_metrics(std::span<const RequestOutput> outputs, double duration_s,
                               std::span<const double> percentiles, const text::Tokenizer* tokenizer) {
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
  }
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
