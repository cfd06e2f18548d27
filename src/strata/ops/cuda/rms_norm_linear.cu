// RMSNorm then a linear on CUDA: the norm kernel, then the linear. Normalising x inside the
// register GEMV (every block redoing the sum of squares and reading the norm's weights) cost
// more than the launch it saved: 8B batch 1 217 -> 210 tok/s on an H200 (docs/perf.md).
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dense_linear.h"
#include "strata/ops/rms_norm_linear.h"

namespace strata::cuda {

void rms_norm_linear(const ops::NormedLinearArgs& a) {
  if (a.x.dim(0) == 0) return;
  rms_norm(a.x, nullptr, a.norm_weight, a.h, a.norm);
  linear(a.h, a.weight, a.bias, a.out);
}

}  // namespace strata::cuda
