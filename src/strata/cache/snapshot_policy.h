// Where a hybrid sequence keeps SSM snapshots for the prefix cache (Marconi's idea: keep
// state where a later request can use it, not at every block). Points are block
// boundaries, counted in tokens from the sequence's start: the branch point where its
// prompt left a cached chain, every interval_tokens of the prompt, the prompt's end, and
// the deepest boundary of its answer so far (moved forward as the answer grows).
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

struct SnapshotPolicy {
  int32_t block_size = 16;
  int32_t interval_tokens = 0;  // a multiple of block_size; 0: no interval snapshots
};

// The interval the policy uses for a --ssm-snapshot-interval value: rounded to the nearest
// block boundary, at least one block; 0 stays 0 (off).
int32_t snapshot_interval_tokens(int32_t requested_tokens, int32_t block_size);

enum class SnapshotKind : uint8_t { kBranch, kInterval, kPromptEnd, kAnswer };

struct SnapshotPoint {
  int32_t num_tokens = 0;  // the state after this many tokens
  SnapshotKind kind = SnapshotKind::kPromptEnd;
};

// What a step computes of one sequence: tokens [begin, end) of it.
struct SnapshotSpan {
  int32_t num_prompt_tokens = 0;
  int32_t branch_tokens = 0;  // > 0: the prompt left a cached chain there
  int32_t begin = 0;
  int32_t end = 0;
};

// The points in (begin, end], ascending, one per boundary (a branch point wins over the
// other kinds). Of the answer's boundaries only the deepest is kept: a later one replaces it.
std::vector<SnapshotPoint> snapshot_points(const SnapshotPolicy& policy, const SnapshotSpan& span);

}  // namespace strata
