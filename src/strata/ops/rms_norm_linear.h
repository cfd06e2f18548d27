// A linear whose input is first RMS-normalised: h = rms_norm(x); out = h @ weight^T (+ bias).
// h is stored too, for the other readers of the normalised input (adapters, experts). A
// backend may do both in one kernel; both run the norm, then the linear, today.
#pragma once

#include "strata/core/tensor.h"
#include "strata/ops/linear.h"
#include "strata/ops/rms_norm.h"

namespace strata::ops {

struct NormedLinearArgs {
  Tensor x;            // [T, in] the un-normalised input
  Tensor norm_weight;  // [in]
  RmsNormParams norm;
  Tensor h;            // [T, in] out: rms_norm(x)
  Tensor weight;       // [out, in]
  Tensor bias;         // [out] or undefined
  Tensor out;          // [T, out]
};

void rms_norm_linear(const NormedLinearArgs& args);

}  // namespace strata::ops

namespace strata::cuda {
void rms_norm_linear(const ops::NormedLinearArgs& args);
}
