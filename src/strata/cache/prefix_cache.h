// PrefixCache: full KV blocks identified by a hash chain (parent hash, the block's token
// ids, an extra key for the adapter or a cache salt), so a new request reuses the blocks
// of an earlier one with the same prefix. Unreferenced cached blocks wait in the block
// pool's free queue (LRU) and are evicted only when the pool hands them out again.
// Hybrid models: a match is usable only up to the deepest boundary with an SSM snapshot;
// snapshots live in a bounded set of SSM slots (reserved before the step that fills them,
// committed or cancelled after, all freed with the cache) under an LRU that gives up unused
// snapshots before used ones; with a host tier, what the device gives up moves there.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "strata/cache/block_pool.h"
#include "strata/cache/kv_cache_events.h"
#include "strata/cache/snapshot_host_tier.h"
#include "strata/cache/ssm_state_pool.h"

namespace strata {

struct PrefixMatch {
  std::vector<int32_t> blocks;  // referenced for the caller
  int32_t num_tokens = 0;       // tokens those blocks cover
  int32_t ssm_snapshot_slot = -1;  // hybrid models: the state after num_tokens (a device slot)
  std::optional<uint64_t> host_snapshot;  // or, from the host tier, the snapshot of this hash
  // Tokens of the cached full blocks before the cut to the deepest snapshot: beyond
  // num_tokens the prompt follows a cached chain whose state was never kept (a branch point).
  int32_t num_block_tokens = 0;
};

// A sequence's newly computed full blocks: block_ids[i] holds the block_size tokens
// token_ids[i * block_size, ...) and is hashed hashes[i].
struct ComputedBlocks {
  std::span<const uint64_t> hashes;
  std::span<const int32_t> block_ids;
  std::span<const int32_t> token_ids;
  std::optional<uint64_t> parent_hash;  // the hash before hashes[0]; none: they start the sequence
};

// Appends to `hashes` the chain hash of every full block of `tokens` past those it holds
// (hashes[b] covers tokens [0, (b + 1) * block_size), seeded with extra_key).
void extend_prefix_block_hashes(std::span<const int32_t> tokens, int32_t block_size, uint64_t extra_key,
                                std::vector<uint64_t>& hashes);

class PrefixCache {
 public:
  // ssm_pool null for attention-only models; num_snapshot_slots bounds the snapshots;
  // host_tier (null: none) keeps snapshots the device slots give up.
  PrefixCache(BlockPool& pool, int32_t block_size, SsmStatePool* ssm_pool, int32_t num_snapshot_slots,
              std::unique_ptr<SnapshotHostTier> host_tier = nullptr);
  // Gives the snapshot slots back to the SSM pool and stops following the block pool; the
  // event sink hears AllBlocksCleared.
  ~PrefixCache();
  PrefixCache(const PrefixCache&) = delete;
  PrefixCache& operator=(const PrefixCache&) = delete;

  // Appends to `hashes` the hash of every full block of `tokens` it does not hold yet,
  // chained from the start (hashes[b] covers tokens [0, (b + 1) * block_size)).
  void extend_block_hashes(std::span<const int32_t> tokens, uint64_t extra_key,
                           std::vector<uint64_t>& hashes) const;

  // The longest usable cached prefix of a prompt, leaving at least its last token to be
  // computed (so the first sampled token has logits). References the matched blocks.
  PrefixMatch match(std::span<const uint64_t> hashes, int32_t num_prompt_tokens);
  // Copies a match's snapshot (device slot or host tier) into slot `dst`; nothing without one.
  void restore_snapshot(const PrefixMatch& match, int32_t dst);

  // Where stored, evicted and cleared blocks are reported (null: nowhere); engine thread only.
  void set_event_sink(KvEventSink* sink) { events_ = sink; }

  // Makes the blocks findable under their hashes. A hash already cached keeps its block; each
  // run of blocks cached here is one BlockStored event.
  void insert(const ComputedBlocks& computed);

  // A slot to capture the SSM state at the boundary ending with block hash `hash`, or
  // nullopt when it is already cached or no slot can be freed. Evicts a snapshot when all
  // the slots are held (eviction_victim).
  std::optional<int32_t> reserve_snapshot(uint64_t hash);
  // The same for a boundary whose hash is not known yet (its last token is still on the device).
  std::optional<int32_t> reserve_snapshot_slot();
  // Takes back the slot of snapshot `hash` as a reserved one when no match has used it yet:
  // a decoding sequence moves its answer's snapshot forward instead of taking a new slot.
  std::optional<int32_t> take_unused_snapshot(uint64_t hash);
  // The slot now holds the state at `hash`, after num_tokens tokens (what a hit saves); false
  // (the slot freed) when another sequence committed that hash first.
  bool commit_snapshot(uint64_t hash, int32_t slot, int32_t num_tokens);
  void cancel_snapshot(int32_t slot);  // a reserved slot that was not filled
  // Frees the eviction victim's slot to the SSM pool (a sequence needs one); false when no
  // snapshot is held.
  bool release_snapshot_slot();

  int64_t num_cached_blocks() const { return static_cast<int64_t>(block_of_hash_.size()); }
  int64_t num_snapshots() const { return static_cast<int64_t>(snapshot_of_hash_.size()); }
  // Kept on the device or in the host tier.
  bool has_snapshot(uint64_t hash) const {
    return snapshot_of_hash_.count(hash) > 0 || (host_tier_ != nullptr && host_tier_->contains(hash));
  }
  const SnapshotHostTier* host_tier() const { return host_tier_.get(); }
  int64_t num_snapshots_taken() const { return num_snapshots_taken_; }  // commits so far
  int64_t snapshot_bytes() const;  // SSM state held by committed snapshots

 private:
  struct Snapshot {
    int32_t slot = -1;
    int64_t num_hits = 0;  // matches that restored it
    int32_t num_tokens = 0;
  };

  void forget_block(int32_t block);  // evicted: its hash goes (BlockRemoved)
  // Reports computed.hashes[first, end) (just cached) as one BlockStored.
  void report_stored(const ComputedBlocks& computed, size_t first, size_t end);
  // The snapshot to give up: the least recently used of those no match has used, else of all.
  std::list<uint64_t>::iterator eviction_victim();
  // Gives the victim's slot up (its state moved to the host tier when there is one, unless
  // the cache is going away); returns the slot, still allocated.
  int32_t evict_snapshot(bool to_host);
  // The deepest of the first `hit` hashes with a snapshot on the device or the host; 0: none.
  size_t snapshot_depth(std::span<const uint64_t> hashes, size_t hit) const;

  BlockPool& pool_;
  int32_t block_size_;
  SsmStatePool* ssm_pool_;
  int32_t num_snapshot_slots_;
  std::unordered_map<uint64_t, int32_t> block_of_hash_;
  std::vector<std::optional<uint64_t>> hash_of_block_;
  std::unordered_map<uint64_t, Snapshot> snapshot_of_hash_;
  std::list<uint64_t> snapshot_lru_;  // front: least recently used
  std::unordered_set<int32_t> reserved_slots_;  // reserved, neither committed nor cancelled
  int32_t num_snapshot_slots_held_ = 0;         // committed and reserved
  int64_t num_snapshots_taken_ = 0;
  std::unique_ptr<SnapshotHostTier> host_tier_;
  KvEventSink* events_ = nullptr;
};

}  // namespace strata
