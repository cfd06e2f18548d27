// Segment means on CUDA against the CPU op: bf16 and f32 rows, widths under and over one block of
// 256 columns, segments of 1 to 300 rows.
#include <gtest/gtest.h>

#include "ops/cuda_op_support.h"
#include "strata/ops/segment_mean.h"

namespace strata::test {
namespace {

class CudaSegmentMean : public CudaOpTest {};

TEST_F(CudaSegmentMean, MatchesCpu) {
  const std::vector<int32_t> cu = {0, 1, 301, 340, 347};
  for (int64_t dim : {64, 768, 1000}) {
    const std::string what = "segment_mean width " + std::to_string(dim);
    const Tensor x = random_rounded({347, dim}, 61, -3.f, 3.f);
    Tensor ref = Tensor::host(DType::kF32, {347, dim});
    ops::segment_mean(x, int_tensor(cu), ref);
    Tensor out = poisoned(DType::kBF16, {347, dim});
    ops::segment_mean(gpu_bf16(x), gpu_copy(int_tensor(cu)), out);
    expect_close(*gpu_, out, ref, kBf16Tolerance, what + " bf16");
    Tensor out_f32 = poisoned(DType::kF32, {347, dim});
    ops::segment_mean(gpu_copy(x), gpu_copy(int_tensor(cu)), out_f32);
    expect_close(*gpu_, out_f32, ref, 1e-5, what + " f32");
  }
}

}  // namespace
}  // namespace strata::test
