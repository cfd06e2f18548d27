#include "strata/cache/block_pool.h"

#include "strata/core/error.h"

namespace strata {

BlockPool::BlockPool(int32_t num_blocks)
    : ref_counts_(num_blocks, 0), prev_(num_blocks, -1), next_(num_blocks, -1) {
  for (int32_t b = 0; b < num_blocks; ++b) push_back(b);
}

std::optional<int32_t> BlockPool::allocate() {
  if (head_ < 0) return std::nullopt;
  const int32_t block = head_;
  if (on_reuse_) on_reuse_(block);
  unlink(block);
  ref_counts_[block] = 1;
  return block;
}

bool BlockPool::allocate_n(int32_t n, std::vector<int32_t>& out) {
  if (n > num_free_) return false;
  for (int32_t i = 0; i < n; ++i) out.push_back(*allocate());
  return true;
}

void BlockPool::add_ref(int32_t block) {
  STRATA_CHECK(block >= 0 && block < num_blocks());
  if (ref_counts_[block] == 0) unlink(block);
  ++ref_counts_[block];
}

void BlockPool::release(int32_t block) {
  STRATA_CHECK(block >= 0 && block < num_blocks());
  STRATA_CHECK_MSG(ref_counts_[block] > 0, "block {} released while free", block);
  if (--ref_counts_[block] == 0) push_back(block);
}

std::vector<int32_t> BlockPool::free_queue() const {
  std::vector<int32_t> out;
  for (int32_t b = head_; b >= 0; b = next_[b]) out.push_back(b);
  return out;
}

void BlockPool::unlink(int32_t block) {
  if (prev_[block] >= 0) next_[prev_[block]] = next_[block]; else head_ = next_[block];
  if (next_[block] >= 0) prev_[next_[block]] = prev_[block]; else tail_ = prev_[block];
  prev_[block] = next_[block] = -1;
  --num_free_;
}

void BlockPool::push_back(int32_t block) {
  prev_[block] = tail_;
  next_[block] = -1;
  if (tail_ >= 0) next_[tail_] = block; else head_ = block;
  tail_ = block;
  ++num_free_;
}

}  // namespace strata
