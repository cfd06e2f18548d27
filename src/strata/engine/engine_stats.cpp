#include "strata/engine/engine_stats.h"

#include <algorithm>

namespace strata {

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds.size() && seconds > bounds[i]) ++i;
  ++counts[i];
  sum += seconds;
  ++count;
}

namespace {

void add_histogram(Histogram& into, const Histogram& from) {
  for (size_t i = 0; i < into.counts.size() && i < from.counts.size(); ++i) into.counts[i] += from.counts[i];
  into.sum += from.sum;
  into.count += from.count;
}

// Every field but kv_cache_usage, which is a fraction (averaged by the caller).
void add_counts(EngineStatsSnapshot& into, const EngineStatsSnapshot& s) {
  into.num_running += s.num_running;
  into.num_waiting += s.num_waiting;
  into.prompt_tokens_total += s.prompt_tokens_total;
  into.generation_tokens_total += s.generation_tokens_total;
  into.preemptions_total += s.preemptions_total;
  into.requests_finished_total += s.requests_finished_total;
  into.requests_cancelled_total += s.requests_cancelled_total;
  into.requests_failed_total += s.requests_failed_total;
  into.prefix_cache_queries_total += s.prefix_cache_queries_total;
  into.prefix_cache_hits_total += s.prefix_cache_hits_total;
  into.prefix_cached_blocks += s.prefix_cached_blocks;
  into.ssm_snapshots_taken_total += s.ssm_snapshots_taken_total;
  into.ssm_snapshots += s.ssm_snapshots;
  into.ssm_snapshot_bytes += s.ssm_snapshot_bytes;
  into.ssm_host_snapshots += s.ssm_host_snapshots;
  into.ssm_host_snapshot_bytes += s.ssm_host_snapshot_bytes;
  into.ssm_host_stored_total += s.ssm_host_stored_total;
  into.ssm_host_restored_total += s.ssm_host_restored_total;
  into.ssm_host_stored_bytes_total += s.ssm_host_stored_bytes_total;
  into.ssm_host_restored_bytes_total += s.ssm_host_restored_bytes_total;
  into.swapped_out_total += s.swapped_out_total;
  into.swapped_in_total += s.swapped_in_total;
  into.swap_out_bytes_total += s.swap_out_bytes_total;
  into.swap_in_bytes_total += s.swap_in_bytes_total;
  into.swap_space_used_bytes += s.swap_space_used_bytes;
  into.max_micro_batches_in_flight = std::max(into.max_micro_batches_in_flight, s.max_micro_batches_in_flight);
  into.spec_num_drafts_total += s.spec_num_drafts_total;
  into.spec_draft_tokens_total += s.spec_draft_tokens_total;
  into.spec_accepted_tokens_total += s.spec_accepted_tokens_total;
  if (into.spec_accepted_per_pos_total.size() < s.spec_accepted_per_pos_total.size())
    into.spec_accepted_per_pos_total.resize(s.spec_accepted_per_pos_total.size(), 0);
  for (size_t pos = 0; pos < s.spec_accepted_per_pos_total.size(); ++pos)
    into.spec_accepted_per_pos_total[pos] += s.spec_accepted_per_pos_total[pos];
  into.kv_event_batches_dropped_total += s.kv_event_batches_dropped_total;
}

}  // namespace

EngineStatsSnapshot sum_engine_stats(std::span<const EngineStatsSnapshot> replicas) {
  EngineStatsSnapshot total;
  if (replicas.empty()) return total;
  for (const EngineStatsSnapshot& s : replicas) {
    add_counts(total, s);
    total.kv_cache_usage += s.kv_cache_usage / static_cast<double>(replicas.size());
    add_histogram(total.time_to_first_token, s.time_to_first_token);
    add_histogram(total.inter_token_latency, s.inter_token_latency);
    add_histogram(total.request_time_per_output_token, s.request_time_per_output_token);
    add_histogram(total.e2e_latency, s.e2e_latency);
    add_histogram(total.cached_prompt_tokens, s.cached_prompt_tokens);
  }
  return total;
}

}  // namespace strata
