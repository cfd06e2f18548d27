// BlockPool: the ids of fixed-size KV blocks, with reference counts. Free blocks wait in a
// queue: allocation takes from the front, a block whose last reference drops goes to the
// back, so the longest-free block is reused first (the prefix cache's LRU order).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace strata {

class BlockPool {
 public:
  explicit BlockPool(int32_t num_blocks);

  int32_t num_blocks() const { return static_cast<int32_t>(ref_counts_.size()); }
  int32_t num_free() const { return num_free_; }

  // The front free block, now referenced once; nullopt when none is free.
  std::optional<int32_t> allocate();
  // n blocks or none at all; false when fewer than n are free.
  bool allocate_n(int32_t n, std::vector<int32_t>& out);
  // Another reference to an allocated block, or revives a free one (taken out of the queue).
  void add_ref(int32_t block);
  // Drops one reference; at zero the block goes to the back of the free queue.
  void release(int32_t block);
  int32_t ref_count(int32_t block) const { return ref_counts_[block]; }
  bool is_free(int32_t block) const { return ref_counts_[block] == 0; }

  // Called with a block's id just before allocate() hands out a block that was free
  // (the prefix cache forgets its hash there: eviction).
  void set_on_reuse(std::function<void(int32_t)> on_reuse) { on_reuse_ = std::move(on_reuse); }
  // Free blocks from front (next to be reused) to back.
  std::vector<int32_t> free_queue() const;

 private:
  void unlink(int32_t block);
  void push_back(int32_t block);

  std::vector<int32_t> ref_counts_;
  std::vector<int32_t> prev_, next_;  // intrusive free queue; -1 ends
  int32_t head_ = -1, tail_ = -1;
  int32_t num_free_ = 0;
  std::function<void(int32_t)> on_reuse_;
};

}  // namespace strata
