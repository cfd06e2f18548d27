#include "strata/ops/rms_norm_linear.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void rms_norm_linear(const NormedLinearArgs& args) {
  STRATA_CHECK(args.x.rank() == 2 && args.norm_weight.numel() == args.x.dim(1));
  STRATA_CHECK(args.weight.rank() == 2 && args.weight.dim(1) == args.x.dim(1));
  expect_shape(args.h, args.x.shape(), "rms_norm_linear h");
  expect_shape(args.out, Shape{args.x.dim(0), args.weight.dim(0)}, "rms_norm_linear out");
  STRATA_DISPATCH(args.x.device(),
                  (rms_norm(args.x, args.norm_weight, args.h, args.norm), linear(args.h, args.weight, args.bias, args.out)),
                  cuda::rms_norm_linear(args));
}

}  // namespace strata::ops
