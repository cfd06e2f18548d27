// SwapSpace (--swap-space): host memory for preempted sequences' KV blocks and SSM states, so
// they resume where they stopped instead of recomputing. Two mirrors, sized from one byte
// budget in the device pools' proportions and never larger than the device pools (more could
// never come back at once). Counts what moved for /metrics.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/cache/host_mirror.h"

namespace strata {

// A swapped-out sequence's memory: the contents of its first num_blocks blocks (in host_blocks
// where the model has attention layers) and of its SSM slot (host_slot; -1 without one).
struct SwappedMemory {
  int32_t num_blocks = 0;
  std::vector<int32_t> host_blocks;
  int32_t host_slot = -1;
};

struct SwapCounters {
  int64_t num_swapped_out = 0;  // sequences
  int64_t num_swapped_in = 0;
  int64_t bytes_swapped_out = 0;
  int64_t bytes_swapped_in = 0;
  int64_t bytes_held = 0;  // in host memory now
};

struct SwapSpaceParts {
  std::vector<Tensor> kv_pools;   // every attention layer's K and V: [num_blocks, ...]
  std::vector<Tensor> ssm_pools;  // every recurrent layer's h and conv states: [num_slots, ...]
  int32_t num_device_blocks = 0;
  int32_t num_device_slots = 0;   // slots sequences may hold
  int64_t bytes = 0;              // the budget
  Backend* backend = nullptr;     // pinned host memory and copies; null: host pools
  // >= 0: exactly this many host block / slot rows (rank 0's, repeated on another rank whose pools
  // differ: a pipeline stage), not sized from the budget.
  int32_t num_host_blocks = -1, num_host_slots = -1;
  // Hands out block rows even without KV pools here: pipeline stage 0 whose layers have no
  // attention, while later stages' do and copy into the rows it chose.
  bool keep_block_rows = false;
};

class SwapSpace {
 public:
  explicit SwapSpace(const SwapSpaceParts& parts);

  // Copies out the first num_blocks of `block_table` and the slot (-1: none); nullopt when
  // host rows are short (nothing copied). The caller frees the device memory.
  std::optional<SwappedMemory> swap_out(std::span<const int32_t> block_table, int32_t num_blocks, int32_t slot);
  // Copies back into `block_table`'s first blocks and `slot`, and frees the host rows.
  void swap_in(SwappedMemory& swapped, std::span<const int32_t> block_table, int32_t slot);
  void release(SwappedMemory& swapped);
  // Another tensor-parallel rank's swap repeated here: the same KV blocks and SSM slot (-1:
  // none) to or from the same host rows, which rank 0's swap_out chose (no allocation here).
  void copy_out_at(std::span<const int32_t> device_blocks, std::span<const int32_t> host_blocks, int32_t slot,
                   int32_t host_slot);
  void copy_in_at(std::span<const int32_t> host_blocks, std::span<const int32_t> device_blocks, int32_t host_slot,
                  int32_t slot);

  int32_t num_host_blocks() const { return has_kv_ ? blocks_.num_rows() : 0; }
  int32_t num_host_slots() const { return slots_.num_rows(); }
  int64_t bytes() const;  // host memory held for swap
  const SwapCounters& counters() const { return counters_; }

 private:
  int64_t bytes_of(const SwappedMemory& swapped) const;

  bool has_kv_;
  HostMirror blocks_, slots_;
  SwapCounters counters_;
};

}  // namespace strata
