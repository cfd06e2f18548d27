#include "strata/ops/segment_mean.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out) {
  STRATA_CHECK(x.rank() == 2 && cu_seqlens.rank() == 1 && cu_seqlens.dim(0) >= 1);
  STRATA_CHECK(cu_seqlens.dtype() == DType::kI32 && x.dtype() == out.dtype() && x.data() != out.data());
  expect_shape(out, x.shape(), "segment_mean out");
  STRATA_DISPATCH(x.device(), cpu::segment_mean(x, cu_seqlens, out), cuda::segment_mean(x, cu_seqlens, out));
}

}  // namespace strata::ops
