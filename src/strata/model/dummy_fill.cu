// Device-side dummy weights: 16 GB of Llama-3.1-8B fill in milliseconds instead of the
// minutes the host path takes to generate and upload them.
#include <cuda_bf16.h>

#include "strata/backend/cuda/cuda_check.h"
#include "strata/model/dummy_fill.h"

namespace strata::cuda {
namespace {

__global__ void fill_dummy_kernel(DummyFill fill, int64_t n, __nv_bfloat16* dst) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = __float2bfloat16_rn(dummy_value(fill, i));
}

}  // namespace

void fill_dummy_bf16(const DummyFill& fill, int64_t n, void* dst) {
  if (n == 0) return;
  const int64_t blocks = (n + 255) / 256;
  fill_dummy_kernel<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, current_stream()>>>(
      fill, n, static_cast<__nv_bfloat16*>(dst));
  STRATA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace strata::cuda
