// Counters and latency histograms the engine keeps for /metrics. Written by the engine
// thread, read by HTTP threads under the mutex.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

namespace strata {

struct Histogram {
  std::vector<double> bounds;        // upper bounds (seconds, or tokens), ascending
  std::vector<uint64_t> counts;      // per bound, not cumulative; last entry: +Inf
  double sum = 0;
  uint64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double seconds);
};

inline const std::vector<double> kTokenLatencyBounds = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
                                                        0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};

struct EngineStatsSnapshot {
  int64_t num_running = 0;
  int64_t num_waiting = 0;
  double kv_cache_usage = 0;         // fraction of KV blocks in use
  uint64_t prompt_tokens_total = 0;
  uint64_t generation_tokens_total = 0;
  uint64_t preemptions_total = 0;
  uint64_t requests_finished_total = 0;    // ended by a stop or a length limit (successes)
  uint64_t requests_cancelled_total = 0;   // cancelled by the client or cut off at shutdown
  uint64_t requests_failed_total = 0;      // failed by the engine (a step or the device failed)
  uint64_t prefix_cache_queries_total = 0;  // prompt tokens looked up
  uint64_t prefix_cache_hits_total = 0;     // prompt tokens found
  int64_t prefix_cached_blocks = 0;
  uint64_t ssm_snapshots_taken_total = 0;   // SSM states the prefix cache kept (hybrid models)
  int64_t ssm_snapshots = 0;                // held now
  int64_t ssm_snapshot_bytes = 0;           // their state
  int64_t ssm_host_snapshots = 0;           // in the host tier now (--ssm-host-cache-gb)
  int64_t ssm_host_snapshot_bytes = 0;
  uint64_t ssm_host_stored_total = 0;       // snapshots moved there from the device
  uint64_t ssm_host_restored_total = 0;     // prefix hits restored from there
  uint64_t ssm_host_stored_bytes_total = 0;
  uint64_t ssm_host_restored_bytes_total = 0;
  uint64_t swapped_out_total = 0;           // preempted sequences moved to host memory (--swap-space)
  uint64_t swapped_in_total = 0;            // of them, brought back
  uint64_t swap_out_bytes_total = 0;        // KV blocks and SSM states copied out
  uint64_t swap_in_bytes_total = 0;         // and back in
  int64_t swap_space_used_bytes = 0;        // held in host memory now
  uint64_t spec_num_drafts_total = 0;       // verify rows (one run of drafts each)
  uint64_t spec_draft_tokens_total = 0;     // speculative drafts verified
  uint64_t spec_accepted_tokens_total = 0;  // of them, the ones the model agreed with
  std::vector<uint64_t> spec_accepted_per_pos_total;  // [position in the run] drafts accepted there
  int64_t max_micro_batches_in_flight = 0;  // pipeline stages: most steps in flight at once so far
  uint64_t kv_event_batches_dropped_total = 0;  // KV-cache event batches the publisher's full queue refused
  // Latencies in seconds, in vLLM's buckets (vllm/v1/metrics/loggers.py), so the vllm: names
  // /metrics also exports read the same histograms.
  Histogram time_to_first_token{{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0,
                                 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}};
  Histogram inter_token_latency{kTokenLatencyBounds};
  // Per finished choice: (last token - first token) / (output tokens - 1), 0 for one token.
  Histogram request_time_per_output_token{kTokenLatencyBounds};
  Histogram e2e_latency{{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0,
                         240.0, 480.0, 960.0, 1920.0, 7680.0}};
  Histogram cached_prompt_tokens{{0, 16, 64, 256, 1024, 4096, 16384, 65536}};  // per request
};

// Data-parallel replicas as one: counters, gauges and histograms summed, the KV-cache usage
// averaged (every replica has a pool of the same size).
EngineStatsSnapshot sum_engine_stats(std::span<const EngineStatsSnapshot> replicas);

class EngineStats {
 public:
  EngineStatsSnapshot snapshot() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return data_;
  }
  template <typename F> void update(F&& fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    fn(data_);
  }

 private:
  mutable std::mutex mutex_;
  EngineStatsSnapshot data_;
};

}  // namespace strata
