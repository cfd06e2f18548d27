// SequenceMemory: the one owner of what sequences hold besides their tokens: KV blocks
// (BlockPool), SSM state slots (SsmStatePool), the per-token states of verify rows
// (VerifyStateBuffers) and, while an engine serves, the prefix cache that lends blocks and
// snapshots between sequences. One small API: reserve for a step, fork, roll back, free,
// evict. The scheduler, the engine loop and DirectSession go through it; the runner that
// made it only reads the stores. Invariant: a freed sequence's slot has no verify buffer.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "strata/cache/block_pool.h"
#include "strata/cache/host_mirror.h"
#include "strata/cache/prefix_cache.h"
#include "strata/cache/snapshot_host_tier.h"
#include "strata/cache/ssm_state_pool.h"
#include "strata/cache/swap_space.h"
#include "strata/cache/verify_state_buffers.h"

namespace strata {

// A fork's result: the child's blocks and SSM slot (-1 on models without recurrent layers).
struct ForkedMemory {
  std::vector<int32_t> block_table;
  int32_t ssm_slot = -1;
};

// What a swap moved: KV blocks and an SSM slot to host rows (out) or back (in), for a
// tensor-parallel rank 0 to repeat on the other ranks.
struct SwapCopy {
  bool out = true;
  std::span<const int32_t> device_blocks, host_blocks;
  int32_t device_slot = -1, host_slot = -1;  // -1: no SSM state
};

// Told of what changes device state outside a step, for a tensor-parallel rank 0 to repeat on
// the other ranks: swap space starting (bytes > 0) or stopping (0), each swap copy, each roll
// back of a verify row, the SSM snapshots' host tier starting (its rows) and each copy to or
// from it (the SSM pool tells its own slot changes: SsmSlotListener).
struct MemoryListener {
  std::function<void(int32_t num_rows)> snapshot_rows;
  std::function<void(const SnapshotCopy&)> snapshot_copy;
  // Started with `bytes` and these host rows (0, 0, 0: stopped).
  std::function<void(int64_t bytes, int32_t num_host_blocks, int32_t num_host_slots)> swap_space;
  std::function<void(const SwapCopy&)> copy;
  std::function<void(int32_t slot, int32_t num_verified, int32_t num_accepted)> roll_back;
};

struct SequenceMemoryParts {
  std::unique_ptr<BlockPool> blocks;
  std::unique_ptr<SsmStatePool> ssm;              // null: no recurrent layers
  std::unique_ptr<VerifyStateBuffers> verify;     // null with ssm
  int32_t block_size = 16;
  std::function<void(int32_t src, int32_t dst)> copy_kv_block;  // one block's KV, every layer
  std::vector<Tensor> kv_pools;  // every attention layer's K and V [num_blocks, ...], for swapping
  Backend* backend = nullptr;    // the pools' (pinned host memory for swap); null: host pools
  MemoryListener memory_listener;  // empty: nobody repeats these changes
  bool keep_block_rows = false;    // swap hands out block rows without KV pools here (SwapSpaceParts)
};

class SequenceMemory {
 public:
  explicit SequenceMemory(SequenceMemoryParts parts);
  ~SequenceMemory();

  // Blocks appended to `block_table` until it covers num_tokens; false (nothing taken) when short.
  bool reserve(std::vector<int32_t>& block_table, int64_t num_tokens);
  // A zeroed SSM slot; a prefix-cache snapshot gives its slot up when none is free (they
  // only speed prompts up). nullopt when no slot can be had.
  std::optional<int32_t> acquire_slot();
  // A sequence holding the first num_tokens tokens of `parent_blocks`: full blocks shared,
  // the partial last one copied, and (state_slot >= 0) a new slot with that slot's state.
  // nullopt (nothing taken) when a block or a slot is short.
  std::optional<ForkedMemory> fork(std::span<const int32_t> parent_blocks, int32_t num_tokens, int32_t state_slot);
  // Sets `slot` to the state after the first num_accepted of the num_verified tokens of its
  // last verify row (the row's first token is always kept).
  void roll_back(int32_t slot, int32_t num_verified, int32_t num_accepted);
  // Releases the blocks (last first: the free queue is the prefix cache's LRU, and a prefix's
  // tail is the least likely part to be shared) and the slot with its verify buffer.
  void free(std::vector<int32_t>& block_table, int32_t& ssm_slot);
  void free_slot(int32_t slot);
  // The longest cached prefix of a fresh sequence's tokens (hashes extended as far as they go):
  // its blocks, referenced, and on hybrid models the snapshot's state copied into ssm_slot.
  // No match while the prefix cache is stopped.
  PrefixMatch match_prefix(std::span<const int32_t> tokens, uint64_t cache_key, std::vector<uint64_t>& hashes,
                           int32_t ssm_slot);

  // Swap (--swap-space) while an engine serves: host memory for preempted sequences, at most
  // `bytes` (0: none, preemption recomputes). Stopping it drops what it held.
  void start_swap_space(int64_t bytes);
  // Another rank: swap space with rank 0's host rows (its pools may differ: a pipeline stage).
  void repeat_swap_space(int64_t bytes, int32_t num_host_blocks, int32_t num_host_slots);
  void stop_swap_space();
  // A tensor-parallel rank: repeats rank 0's copy (start_swap_space first, with rank 0's bytes).
  void repeat_swap(const SwapCopy& copy);
  const SwapSpace* swap_space() const { return swap_.get(); }
  // Moves the blocks covering num_computed_tokens and the slot to host memory and frees them
  // here; false (nothing moved or freed) without swap space or when it is full.
  bool swap_out(std::vector<int32_t>& block_table, int32_t num_computed_tokens, int32_t& ssm_slot,
                std::optional<SwappedMemory>& swapped);
  // Blocks covering num_tokens and a slot (when it had one), the swapped contents copied back;
  // false (nothing taken, still swapped) when blocks or a slot are short.
  bool swap_in(std::optional<SwappedMemory>& swapped, int64_t num_tokens, std::vector<int32_t>& block_table,
               int32_t& ssm_slot);
  void free_swapped(std::optional<SwappedMemory>& swapped);

  // The prefix cache while an engine serves (snapshots in at most num_snapshot_slots slots,
  // and those they give up in host_snapshot_bytes of host memory on hybrid models; its block
  // events go to `events` unless null); stopping it gives the snapshots' slots back. Null when stopped.
  void start_prefix_cache(int32_t num_snapshot_slots, int64_t host_snapshot_bytes = 0, KvEventSink* events = nullptr);
  void stop_prefix_cache();
  PrefixCache* prefix_cache() { return prefix_cache_.get(); }
  // A tensor-parallel rank: host rows for rank 0's SSM host tier (as many as rank 0 has), and
  // rank 0's copies between them and the slots, repeated on this rank's part of the state.
  void start_snapshot_rows(int32_t num_rows);
  void repeat_snapshot_copy(const SnapshotCopy& copy);

  // The stores, for the runner's forward pass and for inspection.
  BlockPool& blocks() { return *blocks_; }
  const BlockPool& blocks() const { return *blocks_; }
  SsmStatePool* ssm() { return ssm_.get(); }
  VerifyStateBuffers* verify() { return verify_.get(); }
  int32_t block_size() const { return block_size_; }

 private:
  std::unique_ptr<BlockPool> blocks_;
  std::unique_ptr<SsmStatePool> ssm_;
  std::unique_ptr<VerifyStateBuffers> verify_;
  int32_t block_size_;
  std::function<void(int32_t, int32_t)> copy_kv_block_;
  std::vector<Tensor> kv_pools_;
  Backend* backend_;
  MemoryListener memory_listener_;
  bool keep_block_rows_ = false;
  std::unique_ptr<PrefixCache> prefix_cache_;
  std::unique_ptr<SwapSpace> swap_;
  std::unique_ptr<HostMirror> snapshot_rows_;  // a rank's copy of rank 0's host tier rows
};

}  // namespace strata
