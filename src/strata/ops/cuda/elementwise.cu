// CUDA elementwise ops on activations: residual add, sigmoid gating, splitting packed head
// halves and joining them, scaling, clamping, row gathers and f32 <-> bf16 conversion.
// Grid-stride loops, f32 math.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/elementwise.h"

namespace strata::cuda {
namespace {

template <typename T, ops::ElementwiseKind kKind>
__global__ void binary_kernel(T* x, const T* y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float a = to_f32(x[i]), b = to_f32(y[i]);
    if constexpr (kKind == ops::ElementwiseKind::kAdd) {
      x[i] = from_f32<T>(a + b);
    } else {
      x[i] = from_f32<T>(a / (1.0f + expf(-b)));
    }
  }
}

template <typename T>
__global__ void scale_kernel(T* x, float factor, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = from_f32<T>(to_f32(x[i]) * factor);
}

// The CPU's std::min(std::max(v, lo), hi), which keeps NaN (fminf / fmaxf would drop it).
template <typename T>
__global__ void clamp_kernel(T* x, float lo, float hi, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float v = to_f32(x[i]);
    const float above = v < lo ? lo : v;
    x[i] = from_f32<T>(hi < above ? hi : above);
  }
}

// packed [rows, 2 * half] -> first, second [rows, half]; element type of any 2-byte or 4-byte size.
template <typename T>
__global__ void split_halves_kernel(const T* packed, T* first, T* second, int64_t rows, int64_t half) {
  const int64_t n = rows * half;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / half, c = i % half;
    first[i] = packed[r * 2 * half + c];
    second[i] = packed[r * 2 * half + half + c];
  }
}

// first, second [rows, half] -> packed [rows, 2 * half].
template <typename T>
__global__ void join_halves_kernel(const T* first, const T* second, T* packed, int64_t rows, int64_t half) {
  const int64_t n = rows * half;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / half, c = i % half;
    packed[r * 2 * half + c] = first[i];
    packed[r * 2 * half + half + c] = second[i];
  }
}

// Rows copied as 4-byte words when the row size allows it, else bytes. Bad indices give zeros.
template <typename W>
__global__ void gather_rows_kernel(const W* src, const int32_t* indices, W* out, int64_t src_rows,
                                   int64_t row_words) {
  const int64_t i = blockIdx.x;
  const int32_t r = indices[i];
  const bool valid = r >= 0 && r < src_rows;
  for (int64_t c = threadIdx.x; c < row_words; c += blockDim.x)
    out[i * row_words + c] = valid ? src[r * row_words + c] : W{};
}

// out[indices[i]] = src[i]; bad indices are skipped.
template <typename W>
__global__ void scatter_rows_kernel(const W* src, const int32_t* indices, W* out, int64_t out_rows,
                                    int64_t row_words) {
  const int64_t i = blockIdx.x;
  const int32_t r = indices[i];
  if (r < 0 || r >= out_rows) return;
  for (int64_t c = threadIdx.x; c < row_words; c += blockDim.x) out[r * row_words + c] = src[i * row_words + c];
}

template <typename Tin, typename Tout>
__global__ void convert_kernel(const Tin* src, Tout* dst, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = from_f32<Tout>(to_f32(src[i]));
}

template <ops::ElementwiseKind kKind>
void launch_binary(const Tensor& x, const Tensor& y) {
  const int64_t n = x.numel();
  const unsigned blocks = grid_for(n, 256);
  const cudaStream_t stream = current_stream();
  if (x.dtype() == DType::kBF16) {
    binary_kernel<__nv_bfloat16, kKind><<<blocks, 256, 0, stream>>>(
        x.data_as<__nv_bfloat16>(), y.data_as<__nv_bfloat16>(), n);
  } else if (x.dtype() == DType::kF32) {
    binary_kernel<float, kKind><<<blocks, 256, 0, stream>>>(x.data_as<float>(), y.data_as<float>(), n);
  } else {
    unsupported_dtype("elementwise", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void elementwise(const Tensor& x, const Tensor& y, ops::ElementwiseKind kind) {
  if (x.numel() == 0) return;
  if (kind == ops::ElementwiseKind::kAdd) {
    launch_binary<ops::ElementwiseKind::kAdd>(x, y);
  } else {
    launch_binary<ops::ElementwiseKind::kSigmoidGate>(x, y);
  }
}

void split_halves(const Tensor& packed, const Tensor& first, const Tensor& second) {
  const int64_t rows = packed.dim(0) * packed.dim(1), half = packed.dim(2) / 2;
  if (rows * half == 0) return;
  STRATA_CHECK(first.dtype() == packed.dtype() && second.dtype() == packed.dtype());
  const unsigned blocks = grid_for(rows * half, 256);
  const cudaStream_t stream = current_stream();
  const int64_t elem = dtype_bytes(packed.dtype(), 1);
  if (elem == 2) {
    split_halves_kernel<uint16_t><<<blocks, 256, 0, stream>>>(
        packed.data_as<uint16_t>(), first.data_as<uint16_t>(), second.data_as<uint16_t>(), rows, half);
  } else if (elem == 4) {
    split_halves_kernel<uint32_t><<<blocks, 256, 0, stream>>>(
        packed.data_as<uint32_t>(), first.data_as<uint32_t>(), second.data_as<uint32_t>(), rows, half);
  } else {
    unsupported_dtype("split_halves", packed.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void join_halves(const Tensor& first, const Tensor& second, const Tensor& packed) {
  const int64_t rows = first.dim(0), half = first.dim(1);
  if (rows * half == 0) return;
  const unsigned blocks = grid_for(rows * half, 256);
  const cudaStream_t stream = current_stream();
  const int64_t elem = dtype_bytes(packed.dtype(), 1);
  if (elem == 2) {
    join_halves_kernel<uint16_t><<<blocks, 256, 0, stream>>>(
        first.data_as<uint16_t>(), second.data_as<uint16_t>(), packed.data_as<uint16_t>(), rows, half);
  } else if (elem == 4) {
    join_halves_kernel<uint32_t><<<blocks, 256, 0, stream>>>(
        first.data_as<uint32_t>(), second.data_as<uint32_t>(), packed.data_as<uint32_t>(), rows, half);
  } else {
    unsupported_dtype("join_halves", packed.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void scale(const Tensor& x, float factor) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const unsigned blocks = grid_for(n, 256);
  const cudaStream_t stream = current_stream();
  if (x.dtype() == DType::kBF16) {
    scale_kernel<<<blocks, 256, 0, stream>>>(x.data_as<__nv_bfloat16>(), factor, n);
  } else if (x.dtype() == DType::kF32) {
    scale_kernel<<<blocks, 256, 0, stream>>>(x.data_as<float>(), factor, n);
  } else {
    unsupported_dtype("scale", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void clamp(const Tensor& x, float lo, float hi) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const unsigned blocks = grid_for(n, 256);
  const cudaStream_t stream = current_stream();
  if (x.dtype() == DType::kBF16) {
    clamp_kernel<<<blocks, 256, 0, stream>>>(x.data_as<__nv_bfloat16>(), lo, hi, n);
  } else if (x.dtype() == DType::kF32) {
    clamp_kernel<<<blocks, 256, 0, stream>>>(x.data_as<float>(), lo, hi, n);
  } else {
    unsupported_dtype("clamp", x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void gather_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  const int64_t m = indices.numel();
  if (m == 0) return;
  const int64_t row_bytes = src.row_bytes();
  const cudaStream_t stream = current_stream();
  if (row_bytes % 4 == 0) {
    gather_rows_kernel<uint32_t><<<m, 256, 0, stream>>>(src.data_as<uint32_t>(),
                                                        indices.data_as<int32_t>(),
                                                        out.data_as<uint32_t>(), src.dim(0), row_bytes / 4);
  } else {
    gather_rows_kernel<uint8_t><<<m, 256, 0, stream>>>(src.data_as<uint8_t>(), indices.data_as<int32_t>(),
                                                       out.data_as<uint8_t>(), src.dim(0), row_bytes);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void scatter_rows(const Tensor& src, const Tensor& indices, const Tensor& out) {
  const int64_t m = indices.numel();
  if (m == 0) return;
  const int64_t row_bytes = src.row_bytes();
  const cudaStream_t stream = current_stream();
  if (row_bytes % 4 == 0) {
    scatter_rows_kernel<uint32_t><<<m, 256, 0, stream>>>(src.data_as<uint32_t>(), indices.data_as<int32_t>(),
                                                         out.data_as<uint32_t>(), out.dim(0), row_bytes / 4);
  } else {
    scatter_rows_kernel<uint8_t><<<m, 256, 0, stream>>>(src.data_as<uint8_t>(), indices.data_as<int32_t>(),
                                                        out.data_as<uint8_t>(), out.dim(0), row_bytes);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void convert(const Tensor& src, const Tensor& dst) {
  const int64_t n = src.numel();
  if (n == 0) return;
  const unsigned blocks = grid_for(n, 256);
  const cudaStream_t stream = current_stream();
  const DType a = src.dtype(), b = dst.dtype();
  if (a == DType::kF32 && b == DType::kBF16) {
    convert_kernel<<<blocks, 256, 0, stream>>>(src.data_as<float>(), dst.data_as<__nv_bfloat16>(), n);
  } else if (a == DType::kBF16 && b == DType::kF32) {
    convert_kernel<<<blocks, 256, 0, stream>>>(src.data_as<__nv_bfloat16>(), dst.data_as<float>(), n);
  } else if (a == DType::kF32 && b == DType::kF32) {
    convert_kernel<<<blocks, 256, 0, stream>>>(src.data_as<float>(), dst.data_as<float>(), n);
  } else if (a == DType::kBF16 && b == DType::kBF16) {
    convert_kernel<<<blocks, 256, 0, stream>>>(src.data_as<__nv_bfloat16>(), dst.data_as<__nv_bfloat16>(), n);
  } else if (a == DType::kF16 && b == DType::kF32) {
    convert_kernel<<<blocks, 256, 0, stream>>>(src.data_as<__half>(), dst.data_as<float>(), n);
  } else {
    throw Error("convert: " + std::string(dtype_name(a)) + " -> " + std::string(dtype_name(b)) +
                " is not supported on CUDA (f32 <-> bf16)");
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
