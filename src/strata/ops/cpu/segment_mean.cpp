#include <algorithm>
#include <vector>

#include "strata/core/error.h"
#include "strata/ops/segment_mean.h"

namespace strata::cpu {

void segment_mean(const Tensor& x, const Tensor& cu_seqlens, const Tensor& out) {
  STRATA_CHECK(x.dtype() == DType::kF32);  // CPU activations are f32
  const int64_t d = x.dim(1), num_segments = cu_seqlens.dim(0) - 1;
  const int32_t* cu = cu_seqlens.data_as<int32_t>();
  const float* src = x.data_as<float>();
  float* dst = out.data_as<float>();
  std::vector<float> sum(static_cast<size_t>(d));
  for (int64_t r = 0; r < num_segments; ++r) {
    STRATA_CHECK(cu[r] <= cu[r + 1] && cu[r + 1] <= x.dim(0));
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (int64_t t = cu[r]; t < cu[r + 1]; ++t)
      for (int64_t j = 0; j < d; ++j) sum[j] += src[t * d + j];
    const float inv = cu[r + 1] > cu[r] ? 1.0f / static_cast<float>(cu[r + 1] - cu[r]) : 0.0f;
    for (int64_t t = cu[r]; t < cu[r + 1]; ++t)
      for (int64_t j = 0; j < d; ++j) dst[t * d + j] = sum[j] * inv;
  }
}

}  // namespace strata::cpu
