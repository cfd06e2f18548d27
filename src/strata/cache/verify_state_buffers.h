// The verify state buffers of a runner: one VerifyStateBuffer per SSM slot that has run a
// verify row (keep_intermediates), made on first use and kept for the slot's next verify.
// After the step, rolling a slot back reads the buffer of that slot.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "strata/cache/verify_state_buffer.h"

namespace strata {

class VerifyStateBuffers {
 public:
  // backend: where the buffers live (null: host memory). Throws strata::Error when max_tokens < 1.
  VerifyStateBuffers(std::vector<SsmLayerShape> layers, int max_tokens, Backend* backend = nullptr);

  int max_tokens() const { return max_tokens_; }
  VerifyStateBuffer& for_slot(int32_t slot);
  // nullptr when the slot never ran a verify row.
  const VerifyStateBuffer* find(int32_t slot) const;
  // Forgets the slot's buffer (the slot was freed); its memory is kept for the next slot.
  void release(int32_t slot);
  // Buffers held by slots (not yet released): 0 once every sequence has let go of its slot.
  int num_in_use() const { return static_cast<int>(buffers_.size()); }

 private:
  std::vector<SsmLayerShape> layers_;
  int max_tokens_;
  Backend* backend_;
  std::map<int32_t, std::unique_ptr<VerifyStateBuffer>> buffers_;
  std::vector<std::unique_ptr<VerifyStateBuffer>> spare_;
};

}  // namespace strata
