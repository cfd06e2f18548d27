// EngineLoop's share of hybrid prefix caching: which SSM states a step keeps for the prefix
// cache (SnapshotPolicy), how the slots are filled, and when they are committed under
// their block's hash. A snapshot is only ever committed with the state its hash names.
#include <algorithm>

#include "strata/engine/engine_loop.h"

namespace strata {

// num_tokens: the row's tokens of token_ids (its last may be pending), drafts excluded: a
// verify row's drafts may be rejected.
void EngineLoop::plan_snapshots(Sequence& seq, int32_t num_tokens, StepRow& row,
                                std::vector<PlannedSnapshot>& planned) {
  PrefixCache* cache = memory_.prefix_cache();
  if (cache == nullptr || seq.ssm_slot < 0) return;
  const std::vector<SnapshotPoint> points = snapshot_points(
      snapshot_policy_, {.num_prompt_tokens = seq.num_prompt_tokens, .branch_tokens = seq.branch_tokens,
                         .begin = seq.num_computed_tokens, .end = seq.num_computed_tokens + num_tokens});
  if (points.empty()) return;
  cache->extend_block_hashes(std::span<const int32_t>(seq.token_ids).first(seq.num_known_tokens()),
                             seq.request->request.cache_key, seq.block_hashes);
  for (const SnapshotPoint& point : points) {
    const size_t block = static_cast<size_t>(point.num_tokens / snapshot_policy_.block_size - 1);
    std::optional<uint64_t> hash;
    if (block < seq.block_hashes.size()) hash = seq.block_hashes[block];
    if (hash && cache->has_snapshot(*hash)) {
      // The answer reached a boundary kept already (the same answer before): that one is
      // now its deepest, and the sequence's own shallower one goes.
      if (point.kind == SnapshotKind::kAnswer) adopt_answer_snapshot(seq, *hash);
      continue;
    }
    const bool taken = hash && std::any_of(planned.begin(), planned.end(),
                                           [&](const PlannedSnapshot& p) { return p.hash == hash; });
    if (taken) continue;
    std::optional<int32_t> slot;
    if (point.kind == SnapshotKind::kAnswer && seq.answer_snapshot_hash)
      slot = cache->take_unused_snapshot(*seq.answer_snapshot_hash);
    if (!slot) slot = hash ? cache->reserve_snapshot(*hash) : cache->reserve_snapshot_slot();
    if (!slot) continue;
    const int32_t after = point.num_tokens - seq.num_computed_tokens;
    const bool at_row_end = after == row.q_len() && !row.keep_intermediates;
    if (!at_row_end) row.ssm_snapshots.push_back({.after_tokens = after, .slot = *slot});
    planned.push_back({.seq = &seq, .point = point, .slot = *slot, .hash = hash, .at_row_end = at_row_end});
  }
}

void EngineLoop::finish_snapshots(const std::vector<PlannedSnapshot>& planned) {
  for (const PlannedSnapshot& p : planned) {
    if (p.at_row_end) memory_.ssm()->copy_slot(p.seq->ssm_slot, p.slot);
    if (p.hash) {
      commit_snapshot(*p.seq, p.point, *p.hash, p.slot);
    } else {
      p.seq->unhashed_snapshots.push_back({.point = p.point, .slot = p.slot});
    }
  }
}

void EngineLoop::cancel_snapshots(const std::vector<PlannedSnapshot>& planned) {
  for (const PlannedSnapshot& p : planned) memory_.prefix_cache()->cancel_snapshot(p.slot);
}

void EngineLoop::commit_snapshot(Sequence& seq, const SnapshotPoint& point, uint64_t hash, int32_t slot) {
  const bool committed = memory_.prefix_cache()->commit_snapshot(hash, slot, point.num_tokens);
  // Committed first by another sequence: the state is the same, so it serves as this answer's.
  if (point.kind == SnapshotKind::kAnswer) seq.answer_snapshot_hash = hash;
  if (committed) parts_.stats.update([](EngineStatsSnapshot& s) { ++s.ssm_snapshots_taken_total; });
}

void EngineLoop::adopt_answer_snapshot(Sequence& seq, uint64_t hash) {
  if (seq.answer_snapshot_hash == hash) return;
  if (seq.answer_snapshot_hash) {
    const std::optional<int32_t> slot = memory_.prefix_cache()->take_unused_snapshot(*seq.answer_snapshot_hash);
    if (slot) memory_.prefix_cache()->cancel_snapshot(*slot);
  }
  seq.answer_snapshot_hash = hash;
}

void EngineLoop::commit_unhashed_snapshots(Sequence& seq) {
  PrefixCache* cache = memory_.prefix_cache();
  if (cache == nullptr || seq.unhashed_snapshots.empty()) return;
  cache->extend_block_hashes(std::span<const int32_t>(seq.token_ids).first(seq.num_known_tokens()),
                             seq.request->request.cache_key, seq.block_hashes);
  std::erase_if(seq.unhashed_snapshots, [&](const UnhashedSnapshot& snapshot) {
    const size_t block = static_cast<size_t>(snapshot.point.num_tokens / snapshot_policy_.block_size - 1);
    if (block >= seq.block_hashes.size()) return false;
    commit_snapshot(seq, snapshot.point, seq.block_hashes[block], snapshot.slot);
    return true;
  });
}

void EngineLoop::drop_unhashed_snapshots(Sequence& seq) {
  PrefixCache* cache = memory_.prefix_cache();
  if (cache != nullptr)
    for (const UnhashedSnapshot& snapshot : seq.unhashed_snapshots) cache->cancel_snapshot(snapshot.slot);
  seq.unhashed_snapshots.clear();
}

}  // namespace strata
