// EngineOptions: everything the serving engine is configured by, built once from the
// CLI flags (see cli/serve_command.cpp) and passed by const&.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "strata/engine/speculative_config.h"
#include "strata/kv_events/kv_events_config.h"

namespace strata {

// Tests only: the fail_at_step-th step the engine launches (counting from 1) throws a
// DeviceError before it runs, as a failing kernel launch would.
struct FaultInjection {
  int64_t fail_at_step = 0;  // 0: never
  bool sticky = false;       // the device is lost (the engine stops) rather than one step failing
};

// The most sequences one step may hold: the batched recurrent kernels put one row per grid row.
inline constexpr int32_t kMaxNumSeqs = 65535;

struct EngineOptions {
  int32_t max_num_batched_tokens = 2048;  // token budget of one step
  int32_t max_num_seqs = 64;              // sequences running at once
  bool enable_chunked_prefill = true;     // off: a prompt is prefilled in one step or waits
  int32_t max_model_len = 0;              // 0: the model's, capped to what the KV pool holds
  int64_t num_kv_blocks = 0;              // 0: sized from max_model_len and max_num_seqs
  int32_t block_size = 16;
  bool enable_prefix_caching = true;      // reuse KV blocks (and SSM snapshots) of earlier prompts
  int32_t ssm_cache_slots = 16;           // SSM snapshots the prefix cache may hold (hybrid models)
  int32_t ssm_snapshot_interval = 512;    // hybrid models: a snapshot every this many prompt tokens; 0: off
  // --swap-space: host memory (GiB) preempted sequences' KV blocks and SSM states move to, so
  // they resume without recomputing; 0: preemption recomputes. Never more than the device pools.
  double swap_space_gib = 4;
  // --ssm-host-cache-gb: host memory (GiB) the prefix cache's SSM snapshots move to when they
  // lose their device slot, restored from on a hit (hybrid models); 0: off.
  double ssm_host_cache_gib = 0;
  // Queue step N+1 before reading step N's tokens back (they reach step N+1 on the device),
  // so the host's work overlaps the GPU's. Unset: on for GPU backends, off on the CPU (where
  // the step is host work, and overlapping would only delay each token by a step).
  std::optional<bool> async_scheduling;
  // Speculative decoding (n-gram drafts or a draft model; rejection sampling for sampled requests); drafts need
  // the newest token on the host, so it turns async scheduling off.
  SpeculativeOptions speculative;
  // Under pipeline parallelism (one rank per stage, no speculation): stage 0 starts the next step,
  // over other sequences, while the later stages run the one before, as vLLM always does. Off:
  // one step in flight, each stage idle while the others compute.
  bool pipeline_micro_batches = true;
  // --kv-events-config: publish the prefix cache's block events as vLLM does (ZeroMQ), for
  // routers that place requests by cached prefix.
  KvEventsConfig kv_events;
  FaultInjection fault_injection;
  // Replica data_parallel_rank of data_parallel_size (--data-parallel-size) numbers its
  // requests rank + 1, rank + 1 + size, ...: ids stay unique over replicas, so the front end
  // knows which replica to cancel at.
  int32_t data_parallel_rank = 0;
  int32_t data_parallel_size = 1;
};

inline constexpr double kMaxSwapSpaceGib = 1 << 20;  // keeps byte counts of host memory in range

// --swap-space and --ssm-host-cache-gb in bytes.
int64_t gib_to_bytes(double gib);

// Throws strata::Error naming the flag for a value out of range or flags that contradict
// each other (checked again by the Engine against the model and the KV pool).
void validate_engine_options(const EngineOptions& options);

}  // namespace strata
