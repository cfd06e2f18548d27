// Scratch device memory that kernels of an op need between launches (split-KV partials,
// MoE positions). It only grows, never while a graph is being captured, and buffers it
// outgrows stay allocated: a captured graph may still point at them.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::cuda {

class DeviceScratch {
 public:
  // At least `bytes` of device memory; the same pointer until a larger request.
  void* get(int64_t bytes);

 private:
  void* current_ = nullptr;
  int64_t bytes_ = 0;
  std::vector<void*> outgrown_;
};

}  // namespace strata::cuda
