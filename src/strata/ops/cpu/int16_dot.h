// Integer dot products of ggml block-quantized weight rows (Q8_0, Q4_1, Q4_K, Q6_K) with an
// activation row quantised to int16 blocks of 32 (AVX2 vpmaddwd). int16, not llama.cpp's
// int8: SmolLM2's down_proj inputs hold single channels ~3000x the rest, and an 8-bit step
// zeroes the other entries of that block (docs/decisions/0006-int16-activations.md).
#pragma once

#include <cstdint>

#include "strata/core/dtype.h"
#include "strata/weights/quant_blocks.h"

namespace strata::cpu {

// One 32-run of an activation row: x ~= d * qs. `d` and `d_sum` are adjacent so a kernel
// can broadcast the pair with one 64-bit load.
struct ActBlock {
  int16_t qs[kQk];
  float d;
  float d_sum;  // d * sum(qs): the minimum term of Q4_1 / Q4_K
};

// x: f32 [n], n a multiple of 32; out: [n / 32].
void quantize_activation_row(const float* x, int64_t n, ActBlock* out);

// out[r] = W[r] . x for r < num_rows (1..kDotRows) consecutive weight rows starting at `w`,
// each `row_bytes` long, against one activation row `a` of in_features / 32 blocks.
inline constexpr int kDotRows = 4;
using RowsDotFn = void (*)(const uint8_t* w, int64_t row_bytes, int num_rows, const ActBlock* a,
                           int64_t in_features, float* out);

// The kernel for `dtype`, or nullptr when the int16 path does not cover it.
RowsDotFn int16_rows_dot(DType dtype);

}  // namespace strata::cpu
