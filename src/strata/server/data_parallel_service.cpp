#include "strata/server/data_parallel_service.h"

#include <algorithm>

#include "strata/cache/prefix_cache.h"
#include "strata/core/error.h"
#include "strata/server/replica_choice.h"

namespace strata::server {

DataParallelService::DataParallelService(std::vector<GenerationService*> replicas, const DataParallelOptions& options)
    : replicas_(std::move(replicas)),
      options_(options),
      prefixes_(static_cast<int32_t>(replicas_.size()), options.prefix_table_blocks),
      in_flight_(replicas_.size()),
      num_submitted_(replicas_.size(), 0) {
  STRATA_CHECK(!replicas_.empty() && options.block_size >= 1);
}

std::vector<int64_t> DataParallelService::count_unfinished() {
  std::vector<int64_t> counts(replicas_.size(), 0);
  for (size_t r = 0; r < replicas_.size(); ++r) {
    std::erase_if(in_flight_[r], [](const std::weak_ptr<RequestStream>& weak) {
      const std::shared_ptr<RequestStream> stream = weak.lock();
      return stream == nullptr || stream->finished();
    });
    counts[r] = static_cast<int64_t>(in_flight_[r].size());
  }
  return counts;
}

std::shared_ptr<RequestStream> DataParallelService::submit(GenerationRequest request) {
  std::vector<uint64_t> hashes;
  if (options_.enable_prefix_affinity)
    extend_prefix_block_hashes(request.prompt_ids, options_.block_size, request.cache_key, hashes);
  // A hit always leaves the prompt's last token to compute, as the prefix cache does.
  const size_t num_usable = request.prompt_ids.empty() ? 0 : (request.prompt_ids.size() - 1) / options_.block_size;
  const std::span<const uint64_t> usable(hashes.data(), std::min(hashes.size(), num_usable));
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<int64_t> unfinished = count_unfinished();
  std::vector<ReplicaLoad> loads(replicas_.size());
  for (size_t r = 0; r < replicas_.size(); ++r)
    loads[r] = {.num_requests = unfinished[r],
                .num_prefix_blocks = prefixes_.num_matching_blocks(static_cast<int32_t>(r), usable)};
  const int32_t chosen = pick_replica(loads);
  std::shared_ptr<RequestStream> stream = replicas_[chosen]->submit(std::move(request));  // a refusal throws
  prefixes_.remember(chosen, hashes);
  in_flight_[chosen].push_back(stream);
  ++num_submitted_[chosen];
  return stream;
}

void DataParallelService::cancel(int64_t request_id) {
  if (request_id < 1) return;
  replicas_[static_cast<size_t>((request_id - 1) % static_cast<int64_t>(replicas_.size()))]->cancel(request_id);
}

// One deadline for all: replicas later in line get what is left of it.
void DataParallelService::shutdown(std::chrono::milliseconds deadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (GenerationService* replica : replicas_) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    replica->shutdown(std::max(left, std::chrono::milliseconds(0)));
  }
}

bool DataParallelService::running() const {
  return std::all_of(replicas_.begin(), replicas_.end(), [](const GenerationService* r) { return r->running(); });
}

int32_t DataParallelService::max_model_len() const {
  int32_t len = replicas_[0]->max_model_len();
  for (const GenerationService* replica : replicas_) len = std::min(len, replica->max_model_len());
  return len;
}

std::vector<EngineStatsSnapshot> DataParallelService::replica_stats() const {
  std::vector<EngineStatsSnapshot> stats;
  for (const GenerationService* replica : replicas_) stats.push_back(replica->stats());
  return stats;
}

EngineStatsSnapshot DataParallelService::stats() const { return sum_engine_stats(replica_stats()); }

std::vector<int64_t> DataParallelService::num_submitted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return num_submitted_;
}

}  // namespace strata::server
