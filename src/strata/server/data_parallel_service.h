// DataParallelService: N engine replicas (--data-parallel-size) behind one GenerationService.
// Each request goes to one replica (pick_replica: prefix affinity, then the fewest unfinished
// requests); a request id names its replica (replica r numbers its requests r + 1 + k * N),
// so cancel finds it. /health is healthy only while every replica runs.
#pragma once

#include <memory>
#include <mutex>
#include <vector>

#include "strata/server/generation_service.h"
#include "strata/server/replica_prefix_table.h"

namespace strata::server {

struct DataParallelOptions {
  int32_t block_size = 16;             // of the replicas' prefix caches
  int64_t prefix_table_blocks = 0;     // remembered per replica (its KV pool's blocks)
  bool enable_prefix_affinity = true;  // off when the replicas cache no prefixes
};

class DataParallelService final : public GenerationService {
 public:
  // The replicas must outlive the service; replica r's engine numbers requests as above.
  DataParallelService(std::vector<GenerationService*> replicas, const DataParallelOptions& options);

  std::shared_ptr<RequestStream> submit(GenerationRequest request) override;
  void cancel(int64_t request_id) override;
  void shutdown(std::chrono::milliseconds deadline) override;
  bool running() const override;
  int32_t max_model_len() const override;
  EngineStatsSnapshot stats() const override;
  std::vector<EngineStatsSnapshot> replica_stats() const override;

  // Where each request went so far (tests, and the start-up log's counts).
  std::vector<int64_t> num_submitted() const;

 private:
  // Unfinished requests per replica; drops finished streams from in_flight_.
  std::vector<int64_t> count_unfinished();

  std::vector<GenerationService*> replicas_;
  DataParallelOptions options_;
  mutable std::mutex mutex_;  // guards what follows
  ReplicaPrefixTable prefixes_;
  std::vector<std::vector<std::weak_ptr<RequestStream>>> in_flight_;  // per replica
  std::vector<int64_t> num_submitted_;
};

}  // namespace strata::server
