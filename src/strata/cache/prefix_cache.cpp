#include "strata/cache/prefix_cache.h"

#include <xxhash.h>

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

PrefixCache::PrefixCache(BlockPool& pool, int32_t block_size, SsmStatePool* ssm_pool,
                         int32_t num_snapshot_slots, std::unique_ptr<SnapshotHostTier> host_tier)
    : pool_(pool), block_size_(block_size), ssm_pool_(ssm_pool), num_snapshot_slots_(num_snapshot_slots),
      hash_of_block_(pool.num_blocks()), host_tier_(std::move(host_tier)) {
  pool_.set_on_reuse([this](int32_t block) { forget_block(block); });
}

PrefixCache::~PrefixCache() {
  pool_.set_on_reuse(nullptr);
  while (!snapshot_lru_.empty()) {
    ssm_pool_->free(evict_snapshot(/*to_host=*/false));
    --num_snapshot_slots_held_;
  }
  for (int32_t slot : reserved_slots_) ssm_pool_->free(slot);
  if (events_ != nullptr) events_->record(AllBlocksCleared{});
}

void extend_prefix_block_hashes(std::span<const int32_t> tokens, int32_t block_size, uint64_t extra_key,
                                std::vector<uint64_t>& hashes) {
  const size_t size = static_cast<size_t>(block_size);
  uint64_t parent = hashes.empty() ? 0x5354524154414b56ull : hashes.back();  // chain root
  for (size_t b = hashes.size(); (b + 1) * size <= tokens.size(); ++b) {
    XXH64_state_t* state = XXH64_createState();
    XXH64_reset(state, extra_key);
    XXH64_update(state, &parent, sizeof(parent));
    XXH64_update(state, tokens.data() + b * size, size * sizeof(int32_t));
    parent = XXH64_digest(state);
    XXH64_freeState(state);
    hashes.push_back(parent);
  }
}

void PrefixCache::extend_block_hashes(std::span<const int32_t> tokens, uint64_t extra_key,
                                      std::vector<uint64_t>& hashes) const {
  extend_prefix_block_hashes(tokens, block_size_, extra_key, hashes);
}

PrefixMatch PrefixCache::match(std::span<const uint64_t> hashes, int32_t num_prompt_tokens) {
  // Blocks must leave the last prompt token uncomputed.
  const size_t max_blocks = static_cast<size_t>(std::max(0, (num_prompt_tokens - 1) / block_size_));
  size_t hit = 0;
  while (hit < std::min(max_blocks, hashes.size()) && block_of_hash_.count(hashes[hit])) ++hit;
  PrefixMatch m{.num_block_tokens = static_cast<int32_t>(hit) * block_size_};
  int32_t snapshot = -1;
  if (ssm_pool_ != nullptr) hit = snapshot_depth(hashes, hit);  // only as deep as the deepest snapshot
  if (ssm_pool_ != nullptr && hit > 0) {
    const auto found = snapshot_of_hash_.find(hashes[hit - 1]);
    if (found == snapshot_of_hash_.end()) {
      m.host_snapshot = hashes[hit - 1];
    } else {
      snapshot = found->second.slot;
      ++found->second.num_hits;
      snapshot_lru_.remove(hashes[hit - 1]);
      snapshot_lru_.push_back(hashes[hit - 1]);
    }
  }
  for (size_t b = 0; b < hit; ++b) {
    const int32_t block = block_of_hash_.at(hashes[b]);
    pool_.add_ref(block);
    m.blocks.push_back(block);
  }
  m.num_tokens = static_cast<int32_t>(hit) * block_size_;
  m.ssm_snapshot_slot = snapshot;
  return m;
}

size_t PrefixCache::snapshot_depth(std::span<const uint64_t> hashes, size_t hit) const {
  while (hit > 0 && !has_snapshot(hashes[hit - 1])) --hit;
  return hit;
}

void PrefixCache::restore_snapshot(const PrefixMatch& match, int32_t dst) {
  if (match.ssm_snapshot_slot >= 0) ssm_pool_->copy_slot(match.ssm_snapshot_slot, dst);
  if (match.host_snapshot) host_tier_->restore(*match.host_snapshot, dst);
}

void PrefixCache::insert(const ComputedBlocks& computed) {
  STRATA_CHECK(computed.block_ids.size() == computed.hashes.size() &&
               computed.token_ids.size() == computed.hashes.size() * static_cast<size_t>(block_size_));
  size_t run_start = 0;  // the run of blocks cached here that block i would extend
  for (size_t i = 0; i < computed.hashes.size(); ++i) {
    const uint64_t hash = computed.hashes[i];
    const int32_t block = computed.block_ids[i];
    if (block_of_hash_.count(hash) || hash_of_block_[block]) {
      report_stored(computed, run_start, i);
      run_start = i + 1;
      continue;
    }
    block_of_hash_[hash] = block;
    hash_of_block_[block] = hash;
  }
  report_stored(computed, run_start, computed.hashes.size());
}

void PrefixCache::report_stored(const ComputedBlocks& computed, size_t first, size_t end) {
  if (events_ == nullptr || first >= end) return;
  const auto tokens = computed.token_ids.subspan(first * block_size_, (end - first) * block_size_);
  events_->record(BlockStored{
      .block_hashes = {computed.hashes.begin() + first, computed.hashes.begin() + end},
      .parent_block_hash = first == 0 ? computed.parent_hash : std::optional<uint64_t>(computed.hashes[first - 1]),
      .token_ids = {tokens.begin(), tokens.end()},
      .block_size = block_size_});
}

void PrefixCache::forget_block(int32_t block) {
  if (!hash_of_block_[block]) return;
  const uint64_t hash = *hash_of_block_[block];
  block_of_hash_.erase(hash);
  hash_of_block_[block].reset();
  if (events_ != nullptr) events_->record(BlockRemoved{.block_hashes = {hash}});
}

std::optional<int32_t> PrefixCache::reserve_snapshot(uint64_t hash) {
  if (snapshot_of_hash_.count(hash)) return std::nullopt;
  return reserve_snapshot_slot();
}

std::optional<int32_t> PrefixCache::reserve_snapshot_slot() {
  if (ssm_pool_ == nullptr || num_snapshot_slots_ == 0) return std::nullopt;
  std::optional<int32_t> slot;
  if (num_snapshot_slots_held_ < num_snapshot_slots_) {
    slot = ssm_pool_->allocate();
    if (slot) ++num_snapshot_slots_held_;
  } else if (!snapshot_lru_.empty()) {
    slot = evict_snapshot(/*to_host=*/true);
  }
  if (slot) reserved_slots_.insert(*slot);
  return slot;
}

std::optional<int32_t> PrefixCache::take_unused_snapshot(uint64_t hash) {
  const auto it = snapshot_of_hash_.find(hash);
  if (it == snapshot_of_hash_.end() || it->second.num_hits > 0) return std::nullopt;
  const int32_t slot = it->second.slot;
  snapshot_of_hash_.erase(it);
  snapshot_lru_.remove(hash);
  reserved_slots_.insert(slot);
  return slot;
}

bool PrefixCache::commit_snapshot(uint64_t hash, int32_t slot, int32_t num_tokens) {
  STRATA_CHECK(reserved_slots_.count(slot));
  if (snapshot_of_hash_.count(hash)) {
    cancel_snapshot(slot);
    return false;
  }
  reserved_slots_.erase(slot);
  if (host_tier_ != nullptr) host_tier_->erase(hash);  // the device copy serves hits now
  snapshot_of_hash_[hash] = Snapshot{.slot = slot, .num_tokens = num_tokens};
  snapshot_lru_.push_back(hash);
  ++num_snapshots_taken_;
  return true;
}

void PrefixCache::cancel_snapshot(int32_t slot) {
  STRATA_CHECK(reserved_slots_.erase(slot) == 1);
  ssm_pool_->free(slot);
  --num_snapshot_slots_held_;
}

int64_t PrefixCache::snapshot_bytes() const {
  return ssm_pool_ == nullptr ? 0 : num_snapshots() * ssm_pool_->slot_bytes();
}

bool PrefixCache::release_snapshot_slot() {
  if (snapshot_lru_.empty()) return false;
  ssm_pool_->free(evict_snapshot(/*to_host=*/true));
  --num_snapshot_slots_held_;
  return true;
}

int32_t PrefixCache::evict_snapshot(bool to_host) {
  const auto victim = eviction_victim();
  const Snapshot snapshot = snapshot_of_hash_.at(*victim);
  if (to_host && host_tier_ != nullptr) host_tier_->store(*victim, snapshot.slot, snapshot.num_tokens);
  snapshot_of_hash_.erase(*victim);
  snapshot_lru_.erase(victim);
  return snapshot.slot;
}

// A state some request started from is likely shared by the next ones too; one that only
// the sequence that computed it has seen may never be used (the answer snapshots of a busy
// server are many). So the unused go first, each group least recently used first.
std::list<uint64_t>::iterator PrefixCache::eviction_victim() {
  const auto unused = std::find_if(snapshot_lru_.begin(), snapshot_lru_.end(),
                                   [&](uint64_t hash) { return snapshot_of_hash_.at(hash).num_hits == 0; });
  return unused != snapshot_lru_.end() ? unused : snapshot_lru_.begin();
}

}  // namespace strata
