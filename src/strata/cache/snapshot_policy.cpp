#include "strata/cache/snapshot_policy.h"

#include <algorithm>

namespace strata {

int32_t snapshot_interval_tokens(int32_t requested_tokens, int32_t block_size) {
  if (requested_tokens <= 0) return 0;
  const int32_t blocks = std::max(1, (requested_tokens + block_size / 2) / block_size);
  return blocks * block_size;
}

std::vector<SnapshotPoint> snapshot_points(const SnapshotPolicy& policy, const SnapshotSpan& span) {
  const int32_t bs = policy.block_size;
  const int32_t prompt_end = span.num_prompt_tokens / bs * bs;
  // Resending the same prompt can hit only up to its last token, one block earlier when the
  // prompt fills its last block.
  const int32_t resend_end = std::max(0, span.num_prompt_tokens - 1) / bs * bs;
  std::vector<SnapshotPoint> points;
  const int32_t first = (span.begin / bs + 1) * bs;
  for (int32_t b = first; b <= span.end; b += bs) {
    if (b == span.branch_tokens) {
      points.push_back({b, SnapshotKind::kBranch});
    } else if (b <= prompt_end && policy.interval_tokens > 0 && b % policy.interval_tokens == 0) {
      points.push_back({b, SnapshotKind::kInterval});
    } else if (b == prompt_end || b == resend_end) {
      points.push_back({b, SnapshotKind::kPromptEnd});
    } else if (b > prompt_end) {
      if (!points.empty() && points.back().kind == SnapshotKind::kAnswer) points.pop_back();
      points.push_back({b, SnapshotKind::kAnswer});
    }
  }
  return points;
}

}  // namespace strata
