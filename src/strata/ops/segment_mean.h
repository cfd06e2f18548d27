// The mean of each segment's rows, written to every row of the segment: the input a classifier
// head reads when it pools by mean before the head (ModernBERT's classifier_pooling "mean"),
// where a step's rows are whole sequences. Sums in f32.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

// x, out: [T, D] f32 (bf16 too on CUDA), not aliased; cu_seqlens: [R + 1] i32, segment r being rows
// [cu[r], cu[r+1]) and cu[R] == T. out[t] = mean of x[cu[r] .. cu[r+1]) for t in segment r.
void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out);

}  // namespace strata::ops

namespace strata::cpu {
void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out);
}
namespace strata::cuda {
void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out);
}
