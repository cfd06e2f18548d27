// EngineOptions: everything the serving engine is configured by, built once from the
// CLI flags (see cli/serve_command.cpp) and passed by const&.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "strata/engine/ngram_proposer.h"

namespace strata {

struct EngineOptions {
  int32_t max_num_batched_tokens = 2048;  // token budget of one step
  int32_t max_num_seqs = 64;              // sequences running at once
  bool enable_chunked_prefill = true;     // off: a prompt is prefilled in one step or waits
  int32_t max_model_len = 0;              // 0: the model's max_position_embeddings
  int64_t num_kv_blocks = 0;              // 0: sized from max_model_len and max_num_seqs
  int32_t block_size = 16;
  bool enable_prefix_caching = true;      // reuse KV blocks (and SSM snapshots) of earlier prompts
  int32_t ssm_cache_slots = 16;           // SSM snapshots the prefix cache may hold (hybrid models)
  // Queue step N+1 before reading step N's tokens back (they reach step N+1 on the device),
  // so the host's work overlaps the GPU's. Unset: on for GPU backends, off on the CPU (where
  // the step is host work, and overlapping would only delay each token by a step).
  std::optional<bool> async_scheduling;
  // Speculative decoding with n-gram drafts (greedy requests without penalties); drafts need
  // the newest token on the host, so it turns async scheduling off.
  NgramOptions speculative;
};

}  // namespace strata
