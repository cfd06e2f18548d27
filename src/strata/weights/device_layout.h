// Block-quantized rows as the CUDA kernels read them. On the host a row is blocks of codes with
// their scale (BlockF8B128, BlockQ8_0); on the device it is the row's k codes, then its scales,
// so codes load 16 bytes at a time (GGUF k-quants: codes ordered lane by lane for the GEMV,
// device_layout.cpp). A row has the same size in both, so row slices still work; the CUDA
// backend's host copies convert.
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"

namespace strata {

// kF8_E4M3_B128 (f32 scale per 128), kQ8_0 (f16 scale per 32), kQ4_K, kQ5_K, kQ6_K and the legacy
// kQ4_0, kQ4_1, kQ5_0, kQ5_1 (these for rows of a multiple of 256 values) have one.
bool has_device_layout(DType dtype);
// Whether the GPU keeps rows of k values of dtype quantized (its kernels read 16-byte aligned
// rows: Q6_K rows of 210 k / 256 bytes need k a multiple of 2048; the legacy types' and Q4_K /
// Q5_K's rows a multiple of 256); the loader widens the rest.
bool keeps_device_layout(DType dtype, int64_t k);

// `rows` rows of k values of `dtype` from the host layout at src to the device layout at dst.
void to_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst);
// And back.
void from_device_layout(DType dtype, const void* src, int64_t rows, int64_t k, void* dst);

}  // namespace strata
