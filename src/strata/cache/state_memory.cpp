#include "strata/cache/state_memory.h"

#include <cstring>

#include "strata/core/error.h"

namespace strata {

Tensor alloc_state(Backend* backend, DType dtype, Shape shape) {
  Tensor t = backend != nullptr ? backend->empty(dtype, shape) : Tensor::host(dtype, shape);
  zero_state(backend, t);
  return t;
}

void zero_state(Backend* backend, const Tensor& dst) {
  if (dst.nbytes() == 0) return;
  if (backend != nullptr) {
    backend->fill_bytes(dst, 0);  // 0 bytes are 0.0 in f32 and f16 alike
  } else {
    std::memset(dst.data(), 0, dst.nbytes());
  }
}

void copy_state(Backend* backend, const Tensor& dst, const Tensor& src) {
  STRATA_CHECK_MSG(dst.nbytes() == src.nbytes(), "state copy of {} bytes into {}", src.nbytes(),
                   dst.nbytes());
  if (dst.nbytes() == 0 || dst.data() == src.data()) return;
  if (backend != nullptr) {
    backend->copy(dst, src);
  } else {
    std::memcpy(dst.data(), src.data(), dst.nbytes());
  }
}

}  // namespace strata
