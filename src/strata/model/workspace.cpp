#include "strata/model/workspace.h"

namespace strata {

Tensor Workspace::alloc(DType dtype, Shape shape) {
  const int64_t bytes = dtype_bytes(dtype, shape.numel());
  if (next_ == slots_.size()) slots_.push_back({});
  Slot& slot = slots_[next_++];
  if (slot.capacity_bytes < bytes) {
    const int64_t capacity = std::max<int64_t>(bytes, 256);
    slot.buffer = backend_.empty(DType::kU8, Shape{capacity});
    slot.capacity_bytes = capacity;
    ++generation_;
  }
  return Tensor::with_storage(nullptr, slot.buffer.data(), dtype, shape, backend_.device());
}

}  // namespace strata
