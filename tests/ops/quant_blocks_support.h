// Random block-quantized weights for the quantized-linear tests: every byte pattern is a valid
// code or packed scale, so blocks are random bytes with their f16 scales (and minimums) set to
// values of a few hundredths, like real weights.
#pragma once

#include "strata/backend/backend.h"

namespace strata::test {

// A host tensor of `dtype` (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K or FP8 kF8_E4M3_B128),
// last dim the values.
Tensor random_blocks(DType dtype, Shape shape, uint64_t seed);
// Its values in f32, exactly as the CPU dequantises them.
Tensor dequantised(const Tensor& q);

}  // namespace strata::test
