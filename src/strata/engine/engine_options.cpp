#include "strata/engine/engine_options.h"

#include "strata/core/error.h"

namespace strata {

int64_t gib_to_bytes(double gib) { return static_cast<int64_t>(gib * static_cast<double>(int64_t{1} << 30)); }

void validate_engine_options(const EngineOptions& options) {
  if (options.max_num_batched_tokens < 1)
    fail("--max-num-batched-tokens is {}; it must be at least 1", options.max_num_batched_tokens);
  if (options.max_num_seqs < 1 || options.max_num_seqs > kMaxNumSeqs)
    fail("--max-num-seqs is {}; it must be between 1 and {}", options.max_num_seqs, kMaxNumSeqs);
  if (options.max_model_len < 0) fail("--max-model-len is {}; it must be >= 0 (0: the model's)", options.max_model_len);
  if (options.num_kv_blocks < 0) fail("--num-kv-blocks is {}; it must be >= 0 (0: automatic)", options.num_kv_blocks);
  if (options.block_size < 1) fail("the KV block size is {}; it must be at least 1", options.block_size);
  if (options.ssm_cache_slots < 0) fail("--ssm-cache-slots is {}; it must be >= 0", options.ssm_cache_slots);
  if (options.ssm_snapshot_interval < 0)
    fail("--ssm-snapshot-interval is {}; it must be >= 0 (0: no interval snapshots)", options.ssm_snapshot_interval);
  if (!(options.swap_space_gib >= 0 && options.swap_space_gib <= kMaxSwapSpaceGib))
    fail("--swap-space is {} GiB; it must be between 0 (preemption recomputes) and {}", options.swap_space_gib,
         kMaxSwapSpaceGib);
  if (!(options.ssm_host_cache_gib >= 0 && options.ssm_host_cache_gib <= kMaxSwapSpaceGib))
    fail("--ssm-host-cache-gb is {}; it must be between 0 (off) and {}", options.ssm_host_cache_gib, kMaxSwapSpaceGib);
  const SpeculativeOptions& spec = options.speculative;
  if (spec.num_speculative_tokens > 0 && spec.num_speculative_tokens >= options.max_num_batched_tokens)
    fail("--speculative-config: num_speculative_tokens {} leaves no room in --max-num-batched-tokens {} for the "
         "token they follow; lower one or raise the other", spec.num_speculative_tokens,
         options.max_num_batched_tokens);
  if (options.fault_injection.fail_at_step < 0)
    fail("fault injection: fail_at_step is {}; it must be >= 0", options.fault_injection.fail_at_step);
  if (options.data_parallel_size < 1 || options.data_parallel_rank < 0 ||
      options.data_parallel_rank >= options.data_parallel_size)
    fail("--data-parallel-size is {} (replica {}); it must be at least 1, with the replica in [0, size)",
         options.data_parallel_size, options.data_parallel_rank);
}

}  // namespace strata
