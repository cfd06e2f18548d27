// FP8 weights as Strata keeps them: kF8_E4M3_B128 rows, blocks of 128 e4m3 values along the
// input dimension with one f32 scale each (BlockF8B128). Checkpoint block scales (128 x 128),
// channel and tensor scales map onto it exactly; `--quantization fp8` fills it from bf16.
#pragma once

#include <cstdint>
#include <string_view>

#include "strata/core/tensor.h"

namespace strata {

enum class WeightQuantization : uint8_t { kNone, kFp8 };

// "none"/"" or "fp8" (vLLM's --quantization values Strata offers); throws Error otherwise.
WeightQuantization parse_weight_quantization(std::string_view name);

// Whether `--quantization fp8` quantizes this tensor: 2-D weights of linear layers whose rows
// are a multiple of 128 wide; not embeddings, the LM head or MoE routers (kept as vLLM keeps them).
bool fp8_quantizable(std::string_view name, const Shape& shape);

// One row of k f32 values (k % 128 == 0) into k / 128 blocks at dst; each block's scale is its
// largest magnitude / 448 and values are x / scale rounded to nearest even (as the GPU does).
void quantize_row_fp8_b128(const float* src, int64_t k, void* dst);

}  // namespace strata
