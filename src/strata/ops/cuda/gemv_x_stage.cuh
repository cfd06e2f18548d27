// The GEMVs' x rows in shared memory as their products read them: copied, or with a gated
// input act(gate) * up rounded to bf16 as the activation kernel would have stored it.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "strata/ops/activation.h"
#include "strata/ops/cuda/activation.cuh"

namespace strata::cuda {

// Columns [first, first + count) of x (16-byte chunks of 8 bf16) as xs [rows, xs_stride >= count].
// x: [rows, row_chunks], or [rows, 2 * row_chunks] gate | up when gated. Every thread calls it.
__device__ inline void stage_gemv_x_cols(const uint4* x, int64_t row_chunks, int64_t first, int64_t count, int rows,
                                         bool gated, ops::Activation act, uint4* xs, int64_t xs_stride) {
  const int64_t total = rows * count, stride = gated ? 2 * row_chunks : row_chunks;
  if (!gated && count == row_chunks && xs_stride == count) {  // whole rows: one contiguous copy
    for (int64_t i = threadIdx.x; i < total; i += blockDim.x) xs[i] = x[i];
    return;
  }
  for (int64_t i = threadIdx.x; i < total; i += blockDim.x) {
    const int64_t r = i / count, c = first + i % count;
    if (!gated) {
      xs[r * xs_stride + c - first] = x[r * stride + c];
      continue;
    }
    const uint4 g = x[r * stride + c], u = x[r * stride + row_chunks + c];
    const auto* gp = reinterpret_cast<const __nv_bfloat162*>(&g);
    const auto* up = reinterpret_cast<const __nv_bfloat162*>(&u);
    uint4 v;
    auto* vp = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 gf = __bfloat1622float2(gp[j]), uf = __bfloat1622float2(up[j]);
      vp[j] = __floats2bfloat162_rn(gated_value(act, gf.x, uf.x), gated_value(act, gf.y, uf.y));
    }
    xs[r * xs_stride + c - first] = v;
  }
}

// All of x: xs [rows, chunks].
__device__ inline void stage_gemv_x(const uint4* x, int64_t chunks, int rows, bool gated, ops::Activation act,
                                    uint4* xs) {
  stage_gemv_x_cols(x, chunks, 0, chunks, rows, gated, act, xs, chunks);
}

}  // namespace strata::cuda
