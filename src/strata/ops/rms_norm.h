// RMSNorm over the last dimension: out = x / rms(x) * w (or * (1 + w) for the zero-centred
// variant of Qwen3-Next and Gemma). Optionally adds a residual first, in place:
// residual += x; out = norm(residual), which fuses the block's residual add.
#pragma once

#include "strata/core/tensor.h"

namespace strata::ops {

struct RmsNormParams {
  float eps = 1e-6f;
  bool unit_offset = false;  // weight is stored as (w - 1)
};

// x: [N, D] activations; weight: [D] any float dtype; out: [N, D] (may alias x).
void rms_norm(const Tensor& x, const Tensor& weight, const Tensor& out, const RmsNormParams& params);

// residual += x, then out = rms_norm(residual). residual, x, out: [N, D].
void add_rms_norm(const Tensor& residual, const Tensor& x, const Tensor& weight, const Tensor& out,
                  const RmsNormParams& params);

}  // namespace strata::ops

namespace strata::cpu {
void rms_norm(const Tensor& x, const Tensor* residual_in, const Tensor& weight, const Tensor& out,
              const ops::RmsNormParams& params);
}
namespace strata::cuda {
void rms_norm(const Tensor& x, const Tensor* residual_in, const Tensor& weight, const Tensor& out,
              const ops::RmsNormParams& params);
}
