#include "strata/ops/varlen_attention.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const std::vector<int32_t>& cu_seqlens,
                      float scale, const Tensor& out) {
  STRATA_CHECK(q.rank() == 3 && q.dtype() == DType::kF32);
  for (const Tensor* t : {&k, &v, &out}) expect_shape(*t, q.shape(), "varlen_attention k, v, out");
  STRATA_CHECK(cu_seqlens.size() >= 2 && cu_seqlens.front() == 0 && cu_seqlens.back() == q.dim(0));
  for (size_t s = 1; s < cu_seqlens.size(); ++s) STRATA_CHECK(cu_seqlens[s] >= cu_seqlens[s - 1]);
  STRATA_CHECK_MSG(q.device().is_cpu(), "varlen_attention has no CUDA kernel; the vision tower runs on the CPU backend");
  cpu::varlen_attention(q, k, v, cu_seqlens, scale, out);
}

}  // namespace strata::ops
