#include "strata/core/tensor.h"

#include <cstdlib>

#include "strata/core/error.h"

namespace strata {

Shape::Shape(std::initializer_list<int64_t> values) {
  STRATA_CHECK(values.size() <= kMaxRank);
  for (int64_t v : values) dims[rank++] = v;
}

int64_t Shape::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) n *= dims[i];
  return n;
}

bool Shape::operator==(const Shape& other) const {
  if (rank != other.rank) return false;
  for (int i = 0; i < rank; ++i)
    if (dims[i] != other.dims[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string out = "[";
  for (int i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

Tensor Tensor::view(void* data, DType dtype, Shape shape, Device device) {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.device_ = device;
  return t;
}

Tensor Tensor::host(DType dtype, Shape shape) {
  const int64_t bytes = dtype_bytes(dtype, shape.numel());
  const size_t rounded = static_cast<size_t>((bytes + 63) / 64 * 64 + 64);
  void* ptr = std::aligned_alloc(64, rounded);
  STRATA_CHECK_MSG(ptr != nullptr, "out of host memory allocating {} bytes", bytes);
  return with_storage(std::shared_ptr<void>(ptr, std::free), ptr, dtype, shape, Device{});
}

Tensor Tensor::with_storage(std::shared_ptr<void> storage, void* data, DType dtype, Shape shape,
                            Device device) {
  Tensor t = view(data, dtype, shape, device);
  t.storage_ = std::move(storage);
  return t;
}

Tensor Tensor::slice_rows(int64_t begin, int64_t end) const {
  STRATA_CHECK(rank() >= 1 && 0 <= begin && begin <= end && end <= shape_[0]);
  Tensor t = *this;
  t.shape_[0] = end - begin;
  t.data_ = static_cast<char*>(data_) + begin * row_bytes();
  return t;
}

Tensor Tensor::reshape(Shape shape) const {
  STRATA_CHECK_MSG(shape.numel() == numel(), "reshape {} -> {}", shape_.str(), shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

}  // namespace strata
