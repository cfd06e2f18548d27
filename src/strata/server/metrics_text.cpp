#include "strata/server/metrics_text.h"

#include <fmt/format.h>

namespace strata::server {
namespace {

struct MetricWriter {
  std::string out;
  std::string prefix;  // strata: or vllm:
  std::string labels;  // model_name="..." (and engine="0" under vLLM's names)
  bool float_style = false;  // write 1.0 for 1, as vLLM's prometheus_client does

  std::string number(double value) const {
    std::string text = fmt::format("{}", value);
    if (float_style && text.find_first_of(".eEin") == std::string::npos) text += ".0";
    return text;
  }
  void header(const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {0}{1} {2}\n# TYPE {0}{1} {3}\n", prefix, name, help, type);
  }
  void scalar(const char* name, const char* type, const char* help, double value) {
    header(name, type, help);
    out += fmt::format("{}{}{{{}}} {}\n", prefix, name, labels, number(value));
  }
  void histogram(const char* name, const char* help, const Histogram& h) {
    header(name, "histogram", help);
    histogram_series(name, h);
  }
  void histogram_series(const char* name, const Histogram& h) {
    uint64_t cumulative = 0;
    for (size_t i = 0; i < h.bounds.size(); ++i) {
      cumulative += h.counts[i];
      out += fmt::format("{}{}_bucket{{{},le=\"{}\"}} {}\n", prefix, name, labels, number(h.bounds[i]),
                         number(static_cast<double>(cumulative)));
    }
    const std::string count = number(static_cast<double>(h.count));
    out += fmt::format("{}{}_bucket{{{},le=\"+Inf\"}} {}\n", prefix, name, labels, count);
    out += fmt::format("{}{}_sum{{{}}} {}\n", prefix, name, labels, number(h.sum));
    out += fmt::format("{}{}_count{{{}}} {}\n", prefix, name, labels, count);
  }
};

// Prometheus label values escape backslash, quote and newline.
std::string escape_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// One of vLLM's series, read from each replica's snapshot.
struct VllmScalar {
  const char* name;
  const char* type;
  const char* help;
  double (*value)(const EngineStatsSnapshot&);
};
struct VllmHistogram {
  const char* name;
  const char* help;
  Histogram EngineStatsSnapshot::*member;
};

constexpr VllmScalar kVllmScalars[] = {
    {"num_requests_running", "gauge", "Number of requests in model execution batches.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.num_running); }},
    {"num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.num_waiting); }},
    {"kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.",
     [](const EngineStatsSnapshot& s) { return s.kv_cache_usage; }},
    {"prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.prefix_cache_queries_total); }},
    {"prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.prefix_cache_hits_total); }},
    {"num_preemptions_total", "counter", "Cumulative number of preemption from the engine.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.preemptions_total); }},
    {"prompt_tokens_total", "counter", "Number of prefill tokens processed.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.prompt_tokens_total); }},
    {"generation_tokens_total", "counter", "Number of generation tokens processed.",
     [](const EngineStatsSnapshot& s) { return static_cast<double>(s.generation_tokens_total); }},
};
constexpr VllmHistogram kVllmHistograms[] = {
    {"time_to_first_token_seconds", "Histogram of time to first token in seconds.",
     &EngineStatsSnapshot::time_to_first_token},
    {"inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
     &EngineStatsSnapshot::inter_token_latency},
    {"request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.",
     &EngineStatsSnapshot::request_time_per_output_token},
    {"e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", &EngineStatsSnapshot::e2e_latency},
};

// What vLLM's PrometheusStatLogger exports (vllm/v1/metrics/loggers.py) that gateways and
// autoscalers read: its names, help texts, labels and buckets; the values are ours. Each
// family lists one series per data-parallel replica (engine="i"), as vLLM's does.
void append_vllm_metrics(std::span<const EngineStatsSnapshot> replicas, const std::string& model_name,
                         std::string& out) {
  MetricWriter w{.prefix = "vllm:", .float_style = true};
  const auto labels = [&](size_t i) {
    return fmt::format("model_name=\"{}\",engine=\"{}\"", escape_label(model_name), i);
  };
  for (const VllmScalar& m : kVllmScalars) {
    w.header(m.name, m.type, m.help);
    for (size_t i = 0; i < replicas.size(); ++i)
      w.out += fmt::format("vllm:{}{{{}}} {}\n", m.name, labels(i), w.number(m.value(replicas[i])));
  }
  for (const VllmHistogram& m : kVllmHistograms) {
    w.header(m.name, "histogram", m.help);
    for (size_t i = 0; i < replicas.size(); ++i) {
      w.labels = labels(i);
      w.histogram_series(m.name, replicas[i].*m.member);
    }
  }
  out += w.out;
}

}  // namespace

std::string render_metrics(const EngineStatsSnapshot& stats, const std::string& model_name) {
  return render_metrics(std::span<const EngineStatsSnapshot>(&stats, 1), model_name);
}

std::string render_metrics(std::span<const EngineStatsSnapshot> replicas, const std::string& model_name) {
  const EngineStatsSnapshot s = replicas.size() == 1 ? replicas[0] : sum_engine_stats(replicas);
  MetricWriter w{.prefix = "strata:", .labels = fmt::format("model_name=\"{}\"", escape_label(model_name))};
  w.scalar("num_requests_running", "gauge", "Requests in the running batch.", static_cast<double>(s.num_running));
  w.scalar("num_requests_waiting", "gauge", "Requests waiting to be scheduled.", static_cast<double>(s.num_waiting));
  w.scalar("kv_cache_usage_perc", "gauge", "Fraction of KV-cache blocks in use (1 = full).", s.kv_cache_usage);
  w.scalar("prompt_tokens_total", "counter", "Prompt tokens processed.", static_cast<double>(s.prompt_tokens_total));
  w.scalar("generation_tokens_total", "counter", "Tokens generated.", static_cast<double>(s.generation_tokens_total));
  w.scalar("num_preemptions_total", "counter", "Sequences preempted for KV-cache space.",
           static_cast<double>(s.preemptions_total));
  w.scalar("request_success_total", "counter", "Requests ended by a stop or a length limit.",
           static_cast<double>(s.requests_finished_total));
  w.scalar("request_aborted_total", "counter", "Requests cancelled by the client or cut off at shutdown.",
           static_cast<double>(s.requests_cancelled_total));
  w.scalar("request_failed_total", "counter", "Requests the engine failed (answered 500).",
           static_cast<double>(s.requests_failed_total));
  w.scalar("prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.",
           static_cast<double>(s.prefix_cache_queries_total));
  w.scalar("prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.",
           static_cast<double>(s.prefix_cache_hits_total));
  w.scalar("prefix_cached_blocks", "gauge", "KV blocks held by the prefix cache.",
           static_cast<double>(s.prefix_cached_blocks));
  w.scalar("ssm_snapshots_taken_total", "counter", "SSM states the prefix cache kept (hybrid models).",
           static_cast<double>(s.ssm_snapshots_taken_total));
  w.scalar("ssm_snapshots", "gauge", "SSM snapshots the prefix cache holds.", static_cast<double>(s.ssm_snapshots));
  w.scalar("ssm_snapshot_bytes", "gauge", "Bytes of SSM state held by prefix-cache snapshots.",
           static_cast<double>(s.ssm_snapshot_bytes));
  w.scalar("ssm_host_snapshots", "gauge", "SSM snapshots in the prefix cache's host tier (--ssm-host-cache-gb).",
           static_cast<double>(s.ssm_host_snapshots));
  w.scalar("ssm_host_snapshot_bytes", "gauge", "Bytes of SSM state in the host tier.",
           static_cast<double>(s.ssm_host_snapshot_bytes));
  w.scalar("ssm_host_stored_total", "counter", "SSM snapshots moved from the device to the host tier.",
           static_cast<double>(s.ssm_host_stored_total));
  w.scalar("ssm_host_restored_total", "counter", "Prefix hits restored from the host tier.",
           static_cast<double>(s.ssm_host_restored_total));
  w.scalar("ssm_host_stored_bytes_total", "counter", "Bytes copied into the host tier.",
           static_cast<double>(s.ssm_host_stored_bytes_total));
  w.scalar("ssm_host_restored_bytes_total", "counter", "Bytes restored from the host tier.",
           static_cast<double>(s.ssm_host_restored_bytes_total));
  w.scalar("num_swapped_out_total", "counter", "Preempted sequences whose memory moved to host memory (--swap-space).",
           static_cast<double>(s.swapped_out_total));
  w.scalar("num_swapped_in_total", "counter", "Swapped-out sequences brought back to the device.",
           static_cast<double>(s.swapped_in_total));
  w.scalar("swap_out_bytes_total", "counter", "Bytes of KV blocks and SSM state copied to host memory.",
           static_cast<double>(s.swap_out_bytes_total));
  w.scalar("swap_in_bytes_total", "counter", "Bytes of KV blocks and SSM state copied back to the device.",
           static_cast<double>(s.swap_in_bytes_total));
  w.scalar("swap_space_used_bytes", "gauge", "Host memory held by swapped-out sequences.",
           static_cast<double>(s.swap_space_used_bytes));
  w.scalar("pipeline_max_micro_batches_in_flight", "gauge",
           "Most steps in flight at once through the pipeline stages so far (--pipeline-parallel-size).",
           static_cast<double>(s.max_micro_batches_in_flight));
  w.scalar("spec_decode_num_drafts_total", "counter", "Runs of speculative drafts verified (one a verify row).",
           static_cast<double>(s.spec_num_drafts_total));
  w.scalar("spec_decode_num_draft_tokens_total", "counter", "Speculative draft tokens verified.",
           static_cast<double>(s.spec_draft_tokens_total));
  w.scalar("spec_decode_num_accepted_tokens_total", "counter", "Speculative draft tokens the model accepted.",
           static_cast<double>(s.spec_accepted_tokens_total));
  w.header("spec_decode_num_accepted_tokens_per_pos_total", "counter",
           "Speculative draft tokens accepted at each position of their run (0: the first draft).");
  for (size_t pos = 0; pos < s.spec_accepted_per_pos_total.size(); ++pos)
    w.out += fmt::format("strata:spec_decode_num_accepted_tokens_per_pos_total{{{},position=\"{}\"}} {}\n", w.labels,
                         pos, s.spec_accepted_per_pos_total[pos]);
  w.histogram("time_to_first_token_seconds", "Time from arrival to the first generated token.", s.time_to_first_token);
  w.histogram("inter_token_latency_seconds", "Time between consecutive generated tokens.", s.inter_token_latency);
  w.histogram("request_time_per_output_token_seconds",
              "Per finished choice: time from its first to its last token over the tokens after the first.",
              s.request_time_per_output_token);
  w.histogram("e2e_request_latency_seconds", "Time from arrival to the end of a request.", s.e2e_latency);
  w.histogram("request_cached_prompt_tokens", "Prompt tokens each request found in the prefix cache.",
              s.cached_prompt_tokens);
  w.scalar("kv_event_batches_dropped_total", "counter",
           "KV-cache event batches dropped because the publisher's queue was full (--kv-events-config).",
           static_cast<double>(s.kv_event_batches_dropped_total));
  append_vllm_metrics(replicas, model_name, w.out);
  return w.out;
}

}  // namespace strata::server
