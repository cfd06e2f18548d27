// MXFP4 (OCP microscaling FP4), as gpt-oss checkpoints store their experts: groups of 32
// e2m1 values packed two per byte (low nibble first) in `*_blocks` [..., groups, 16] u8, and
// one e8m0 scale per group in `*_scales` [..., groups] u8 (value = fp4 * 2^(scale - 127)).
#pragma once

#include <cstdint>

namespace strata {

// One row of num_groups * 32 values: blocks [num_groups, 16], scales [num_groups], out f32.
// Exact: every value is an fp4 value times a power of two.
void dequantize_mxfp4_row(const uint8_t* blocks, const uint8_t* scales, int64_t num_groups, float* out);

}  // namespace strata
