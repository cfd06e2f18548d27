#include "strata/model/step_buffers.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

Tensor StepBuffers::put(Field field, const std::vector<int32_t>& host, Shape shape) {
  const int64_t n = shape.numel();
  STRATA_CHECK(static_cast<int64_t>(host.size()) >= n);
  if (capacity_[field] < n || !buffers_[field].defined()) {
    capacity_[field] = std::max<int64_t>({n, 2 * capacity_[field], 1024});
    buffers_[field] = backend_.empty(DType::kI32, {capacity_[field]});
    ++generation_;
  }
  Tensor view = Tensor::with_storage(nullptr, buffers_[field].data(), DType::kI32, shape, backend_.device());
  if (n > 0) {
    Tensor src = Tensor::view(const_cast<int32_t*>(host.data()), DType::kI32, {n});
    backend_.copy(view.reshape({n}), src);
  }
  return view;
}

}  // namespace strata
