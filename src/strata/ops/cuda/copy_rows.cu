// CUDA row copies: one cudaMemcpyAsync per run of consecutive rows on the current stream
// (a swapped sequence's blocks are often consecutive), so they land after the step that
// wrote them and before the next one. Pinned host memory keeps the copies asynchronous.
#include "strata/ops/copy_rows.h"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

void copy_rows(const Tensor& dst, const Tensor& src, std::span<const ops::RowCopy> copies) {
  const int64_t row_bytes = dst.row_bytes();
  char* out = static_cast<char*>(dst.data());
  const char* in = static_cast<const char*>(src.data());
  for (size_t i = 0; i < copies.size();) {
    size_t run = 1;
    while (i + run < copies.size() && copies[i + run].src_row == copies[i].src_row + static_cast<int32_t>(run) &&
           copies[i + run].dst_row == copies[i].dst_row + static_cast<int32_t>(run))
      ++run;
    STRATA_CUDA_CHECK(cudaMemcpyAsync(out + copies[i].dst_row * row_bytes, in + copies[i].src_row * row_bytes,
                                      static_cast<size_t>(row_bytes * static_cast<int64_t>(run)), cudaMemcpyDefault,
                                      current_stream()));
    i += run;
  }
}

}  // namespace strata::cuda
