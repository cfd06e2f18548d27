// CUDA logits mask: one block per masked row, a thread per vocabulary entry (grid-stride).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/logits_mask.h"

namespace strata::cuda {
namespace {

__global__ void mask_logits_kernel(float* logits, const int32_t* rows, const uint32_t* bits, int64_t vocab,
                                   int64_t words, int64_t num_logit_rows) {
  const int32_t row = rows[blockIdx.x];
  if (row < 0 || row >= num_logit_rows) return;
  const uint32_t* b = bits + blockIdx.x * words;
  for (int64_t v = threadIdx.x; v < vocab; v += blockDim.x)
    if (((b[v / 32] >> (v % 32)) & 1u) == 0) logits[row * vocab + v] = -INFINITY;
}

}  // namespace

void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits) {
  mask_logits_kernel<<<rows.dim(0), 256, 0, current_stream()>>>(
      logits.data_as<float>(), rows.data_as<const int32_t>(), reinterpret_cast<const uint32_t*>(bits.data()),
      logits.dim(1), bits.dim(1), logits.dim(0));
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
