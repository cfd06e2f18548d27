#include "strata/ops/elementwise.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"

namespace strata::cpu {

void elementwise(const Tensor& x, const Tensor& y, ops::ElementwiseKind kind) {
  float* a = x.data_as<float>();
  const float* b = y.data_as<float>();
  parallel_for(x.numel(), 1 << 14, [&](int64_t begin, int64_t end) {
    if (kind == ops::ElementwiseKind::kAdd) {
      for (int64_t i = begin; i < end; ++i) a[i] += b[i];
    } else {
      for (int64_t i = begin; i < end; ++i) a[i] *= 1.0f / (1.0f + std::exp(-b[i]));
    }
  });
}

void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second) {
  const int64_t rows = packed.dim(0) * packed.dim(1), half = packed.dim(2) / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const float* src = packed.data_as<float>() + r * 2 * half;
    std::memcpy(first.data_as<float>() + r * half, src, half * 4);
    std::memcpy(second.data_as<float>() + r * half, src + half, half * 4);
  }
}

void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed) {
  const int64_t half_bytes = first.row_bytes();
  for (int64_t r = 0; r < first.dim(0); ++r) {
    char* dst = static_cast<char*>(packed.data()) + r * 2 * half_bytes;
    std::memcpy(dst, static_cast<const char*>(first.data()) + r * half_bytes, half_bytes);
    std::memcpy(dst + half_bytes, static_cast<const char*>(second.data()) + r * half_bytes, half_bytes);
  }
}

void scale(const Tensor& x, float factor) {
  float* a = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) a[i] *= factor;
}

void clamp(const Tensor& x, float lo, float hi) {
  float* a = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) a[i] = std::min(std::max(a[i], lo), hi);
}

void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  const int64_t row_bytes = src.row_bytes();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int32_t r = indices.data_as<int32_t>()[i];
    STRATA_CHECK(r >= 0 && r < src.dim(0));
    std::memcpy(static_cast<char*>(out.data()) + i * row_bytes,
                static_cast<const char*>(src.data()) + r * row_bytes, row_bytes);
  }
}

void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  const int64_t row_bytes = src.row_bytes();
  for (int64_t i = 0; i < indices.numel(); ++i) {
    const int32_t r = indices.data_as<int32_t>()[i];
    STRATA_CHECK(r >= 0 && r < out.dim(0));
    std::memcpy(static_cast<char*>(out.data()) + r * row_bytes,
                static_cast<const char*>(src.data()) + i * row_bytes, row_bytes);
  }
}

void convert(const Tensor& src, const Tensor& dst) {
  if (src.dtype() == DType::kF32) {
    narrow_from_f32(src.data_as<float>(), dst.dtype(), src.numel(), dst.data());
  } else {
    STRATA_CHECK(dst.dtype() == DType::kF32);
    widen_to_f32(src.data(), src.dtype(), src.numel(), dst.data_as<float>());
  }
}

}  // namespace strata::cpu
