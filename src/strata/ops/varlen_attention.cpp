#include "strata/ops/varlen_attention.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const VarlenSegments& segments, float scale,
                      const Tensor& out) {
  STRATA_CHECK(q.rank() == 3 && (q.dtype() == DType::kF32 || q.dtype() == DType::kBF16));
  for (const Tensor* t : {&k, &v, &out}) {
    expect_shape(*t, q.shape(), "varlen_attention k, v, out");
    STRATA_CHECK(t->dtype() == q.dtype() && t->device() == q.device());
  }
  const Tensor& cu = segments.cu_seqlens;
  STRATA_CHECK(cu.rank() == 1 && cu.numel() >= 2 && cu.dtype() == DType::kI32 && cu.device() == q.device());
  STRATA_CHECK(segments.max_seqlen >= 0 && segments.max_seqlen <= q.dim(0));
  if (q.device().is_cpu()) {  // device segments cannot be read here; their builder checks them
    const int32_t* c = cu.data_as<int32_t>();
    STRATA_CHECK(c[0] == 0 && c[cu.numel() - 1] == q.dim(0));
    for (int64_t s = 1; s < cu.numel(); ++s) STRATA_CHECK(c[s] >= c[s - 1] && c[s] - c[s - 1] <= segments.max_seqlen);
    STRATA_CHECK(q.dtype() == DType::kF32);
  } else {
    STRATA_CHECK(q.dim(2) % 4 == 0 && q.dim(2) <= kVarlenAttentionMaxHeadDim);
  }
  STRATA_DISPATCH(q.device(), cpu::varlen_attention(q, k, v, segments, scale, out),
                  cuda::varlen_attention(q, k, v, segments, scale, out));
}

void check_varlen_attention_supported(Device device, int64_t head_dim, const std::string& layer) {
  if (device.is_cpu() || (head_dim % 4 == 0 && head_dim <= kVarlenAttentionMaxHeadDim)) return;
  fail("{}: attention head size {} has no CUDA kernel (multiples of 4 up to {}); run this model with --device cpu",
       layer, head_dim, kVarlenAttentionMaxHeadDim);
}

}  // namespace strata::ops
