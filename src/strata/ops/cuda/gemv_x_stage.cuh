// The GEMVs' x rows in shared memory as their products read them: copied, or with a gated
// input act(gate) * up rounded to bf16 as the activation kernel would have stored it.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "strata/ops/activation.h"
#include "strata/ops/cuda/activation.cuh"

namespace strata::cuda {

// x: [rows, chunks] 16-byte chunks of 8 bf16, or [rows, 2 * chunks] gate | up when gated;
// xs: [rows, chunks]. Called by every thread of the block.
__device__ inline void stage_gemv_x(const uint4* x, int64_t chunks, int rows, bool gated, ops::Activation act,
                                    uint4* xs) {
  const int64_t total = rows * chunks;
  if (!gated) {
    for (int64_t i = threadIdx.x; i < total; i += blockDim.x) xs[i] = x[i];
    return;
  }
  for (int64_t i = threadIdx.x; i < total; i += blockDim.x) {
    const int64_t r = i / chunks, c = i % chunks;
    const uint4 g = x[r * 2 * chunks + c], u = x[r * 2 * chunks + chunks + c];
    const auto* gp = reinterpret_cast<const __nv_bfloat162*>(&g);
    const auto* up = reinterpret_cast<const __nv_bfloat162*>(&u);
    uint4 v;
    auto* vp = reinterpret_cast<__nv_bfloat162*>(&v);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 gf = __bfloat1622float2(gp[j]), uf = __bfloat1622float2(up[j]);
      vp[j] = __floats2bfloat162_rn(gated_value(act, gf.x, uf.x), gated_value(act, gf.y, uf.y));
    }
    xs[i] = v;
  }
}

}  // namespace strata::cuda
