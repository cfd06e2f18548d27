#include "strata/ops/lora.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {

void lora_add(const LoraArgs& args) {
  const int64_t t = args.x.dim(0), in = args.x.dim(1);
  STRATA_CHECK(args.a.rank() == 3 && args.b.rank() == 3 && args.a.dim(2) == in);
  STRATA_CHECK(args.b.dim(0) == args.a.dim(0) && args.b.dim(2) == args.a.dim(1));
  expect_shape(args.scales, {args.a.dim(0)}, "lora_add scales");
  expect_shape(args.token_slots, {t}, "lora_add token_slots");
  STRATA_CHECK(args.y.rank() == 2 && args.y.dim(0) == t && args.col_offset >= 0 &&
               args.col_offset + args.b.dim(1) <= args.y.dim(1));
  STRATA_CHECK(args.token_slots.dtype() == DType::kI32 && args.scales.dtype() == DType::kF32);
  if (t == 0) return;
  STRATA_DISPATCH(args.x.device(), cpu::lora_add(args), cuda::lora_add(args));
}

}  // namespace strata::ops
