// CUDA cache-row stores (ops/compressed_kv.h store_row_part): one block per source row, threads
// over its columns; rows with slot -1 (padding) or outside the rows are skipped. DeepSeek-V4's
// window compression itself is CPU only.
#include "strata/ops/compressed_kv.h"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

__global__ void store_row_part_kernel(const float* src, const int32_t* slots, float* rows, int64_t n,
                                      int64_t num_slots, int64_t row_width, int64_t column) {
  const int64_t i = blockIdx.x;
  const int32_t slot = slots[i];
  if (slot < 0 || slot >= num_slots) return;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) rows[slot * row_width + column + c] = src[i * n + c];
}

}  // namespace

void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows) {
  store_row_part_kernel<<<static_cast<unsigned>(src.dim(0)), 128, 0, current_stream()>>>(
      src.data_as<float>(), slots.data_as<int32_t>(), rows.data_as<float>(), src.dim(1), rows.dim(0), rows.dim(1),
      column);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
