#include "strata/ops/prepare_qkv.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void prepare_qkv(const PrepareQkvArgs& args, const PrepareQkvParams& params) {
  const int64_t t = args.qkv.dim(0), nh = args.q_out.dim(1), hd = args.q_out.dim(2);
  const int64_t nkv = args.k_cache.dim(2);
  expect_shape(args.qkv, {t, (nh + 2 * nkv) * hd}, "prepare_qkv qkv");
  expect_shape(args.q_out, {t, nh, hd}, "prepare_qkv q_out");
  STRATA_CHECK(args.k_cache.dim(3) == hd && args.v_cache.shape() == args.k_cache.shape());
  STRATA_CHECK(args.q_norm.defined() == args.k_norm.defined());
  STRATA_CHECK(params.rotary_dim % 2 == 0 && params.rotary_dim <= hd);
  STRATA_DISPATCH(args.qkv.device(), cpu::prepare_qkv(args, params), cuda::prepare_qkv(args, params));
}

}  // namespace strata::ops
