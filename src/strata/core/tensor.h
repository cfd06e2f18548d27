// Tensor: a typed, shaped view of memory on one device, optionally owning its buffer.
// Strides are in elements (blocks for quantized types along the last dim, which must
// be contiguous). Views share the owner's storage; copying a Tensor is cheap.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

#include "strata/core/dtype.h"

namespace strata {

enum class DeviceType : uint8_t { kCpu, kCuda };

struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;
  bool operator==(const Device&) const = default;
  bool is_cpu() const { return type == DeviceType::kCpu; }
};

// 5: vision towers' Conv3d patch embeddings (Qwen3.5's model.visual.patch_embed) are rank 5.
inline constexpr int kMaxRank = 5;

struct Shape {
  std::array<int64_t, kMaxRank> dims{};
  int rank = 0;

  Shape() = default;
  Shape(std::initializer_list<int64_t> values);
  int64_t operator[](int i) const { return dims[i < 0 ? rank + i : i]; }
  int64_t& operator[](int i) { return dims[i < 0 ? rank + i : i]; }
  int64_t numel() const;
  bool operator==(const Shape& other) const;
  std::string str() const;
};

class Tensor {
 public:
  Tensor() = default;
  // A view of memory owned elsewhere (mmap'd weights, a pool, a caller's buffer).
  static Tensor view(void* data, DType dtype, Shape shape, Device device = {});
  // Owned host memory (64-byte aligned).
  static Tensor host(DType dtype, Shape shape);
  // Wrap memory that `storage` keeps alive.
  static Tensor with_storage(std::shared_ptr<void> storage, void* data, DType dtype, Shape shape,
                             Device device);

  bool defined() const { return shape_.rank > 0; }
  void* data() const { return data_; }
  template <typename T> T* data_as() const { return static_cast<T*>(data_); }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i]; }
  int rank() const { return shape_.rank; }
  int64_t numel() const { return shape_.numel(); }
  int64_t nbytes() const { return dtype_bytes(dtype_, numel()); }
  Device device() const { return device_; }
  // Bytes between consecutive entries of dimension 0 (rows of a 2-D tensor).
  int64_t row_bytes() const { return nbytes() / (shape_.rank ? shape_[0] : 1); }

  // Rows [begin, end) of dimension 0, sharing storage.
  Tensor slice_rows(int64_t begin, int64_t end) const;
  // Same bytes, another shape with the same numel.
  Tensor reshape(Shape shape) const;

 private:
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
  DType dtype_ = DType::kF32;
  Shape shape_;
  Device device_;
};

}  // namespace strata
