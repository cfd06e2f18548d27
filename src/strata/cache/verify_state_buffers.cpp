#include "strata/cache/verify_state_buffers.h"

#include "strata/core/error.h"

namespace strata {

VerifyStateBuffers::VerifyStateBuffers(std::vector<SsmLayerShape> layers, int max_tokens, Backend* backend)
    : layers_(std::move(layers)), max_tokens_(max_tokens), backend_(backend) {
  if (max_tokens < 1) fail("VerifyStateBuffers: max_tokens is {}; it must be >= 1", max_tokens);
}

VerifyStateBuffer& VerifyStateBuffers::for_slot(int32_t slot) {
  auto it = buffers_.find(slot);
  if (it != buffers_.end()) return *it->second;
  std::unique_ptr<VerifyStateBuffer> buffer;
  if (!spare_.empty()) {
    buffer = std::move(spare_.back());
    spare_.pop_back();
  } else {
    buffer = std::make_unique<VerifyStateBuffer>(layers_, max_tokens_, backend_);
  }
  buffer->set_num_tokens(0);
  return *(buffers_[slot] = std::move(buffer));
}

const VerifyStateBuffer* VerifyStateBuffers::find(int32_t slot) const {
  auto it = buffers_.find(slot);
  return it == buffers_.end() ? nullptr : it->second.get();
}

void VerifyStateBuffers::release(int32_t slot) {
  auto it = buffers_.find(slot);
  if (it == buffers_.end()) return;
  spare_.push_back(std::move(it->second));
  buffers_.erase(it);
}

}  // namespace strata
