// The inner step of the weight-streaming GEMVs: 8 bf16 products from two 16-byte loads.
#pragma once

#include <cuda_bf16.h>

namespace strata::cuda {

// acc += the dot product of 8 bf16 weights and 8 bf16 activations (one 16-byte load each).
__device__ __forceinline__ void fma_bf16x8(float& acc, const uint4& w, const uint4& x) {
  const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&w);
  const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&x);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = __bfloat1622float2(wp[i]), b = __bfloat1622float2(xp[i]);
    acc = fmaf(a.x, b.x, acc);
    acc = fmaf(a.y, b.y, acc);
  }
}

}  // namespace strata::cuda
