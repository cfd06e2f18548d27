// Workspace: temporaries of one forward pass, handed out in order from the backend and
// released together at the end of the step. The same sequence of requests gets the same
// addresses every step, which CUDA graph replay relies on.
#pragma once

#include <vector>

#include "strata/backend/backend.h"

namespace strata {

class Workspace {
 public:
  explicit Workspace(Backend& backend) : backend_(backend) {}
  Tensor alloc(DType dtype, Shape shape);
  // Everything handed out since the last reset() may be reused.
  void reset() { next_ = 0; }
  // Changes whenever a buffer is (re)allocated, i.e. when handed-out addresses change.
  int64_t generation() const { return generation_; }

 private:
  struct Slot {
    Tensor buffer;  // [capacity_bytes] u8
    int64_t capacity_bytes = 0;
  };
  Backend& backend_;
  std::vector<Slot> slots_;
  size_t next_ = 0;
  int64_t generation_ = 0;
};

}  // namespace strata
