#include "strata/ops/mla.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void mla_expand_kv(const Tensor& kv, const Tensor& k_rot, int64_t nope_dim, const Tensor& k_out, const Tensor& v_out) {
  STRATA_CHECK(kv.rank() == 3 && k_rot.rank() == 2 && k_rot.dim(0) == kv.dim(0));
  const int64_t t = kv.dim(0), heads = kv.dim(1), rope = k_rot.dim(1), v_dim = kv.dim(2) - nope_dim;
  STRATA_CHECK_MSG(nope_dim >= 0 && v_dim >= 1 && v_dim <= rope + nope_dim, "mla_expand_kv: nope {} v {} rope {}",
                   nope_dim, v_dim, rope);
  expect_shape(k_out, {t, heads, rope + nope_dim}, "mla_expand_kv k_out");
  expect_shape(v_out, {t, heads, rope + nope_dim}, "mla_expand_kv v_out");
  STRATA_CHECK(kv.dtype() == k_rot.dtype() && kv.dtype() == k_out.dtype() && kv.dtype() == v_out.dtype());
  STRATA_DISPATCH(kv.device(), cpu::mla_expand_kv(kv, k_rot, nope_dim, k_out, v_out),
                  cuda::mla_expand_kv(kv, k_rot, nope_dim, k_out, v_out));
}

void narrow_heads(const Tensor& src, const Tensor& out) {
  STRATA_CHECK(src.rank() == 3 && out.rank() == 3 && src.dtype() == out.dtype());
  STRATA_CHECK(out.dim(0) == src.dim(0) && out.dim(1) == src.dim(1) && out.dim(2) <= src.dim(2));
  STRATA_DISPATCH(src.device(), cpu::narrow_heads(src, out), cuda::narrow_heads(src, out));
}

}  // namespace strata::ops
