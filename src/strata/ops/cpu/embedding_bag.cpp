#include "strata/ops/embedding_bag.h"

#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata::cpu {

void embedding_bag(const Tensor& table, const Tensor& indices, const Tensor& weights, const Tensor& out) {
  const int64_t d = table.dim(1), taps = indices.dim(1);
  parallel_for(indices.dim(0), 16, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      float* o = out.data_as<float>() + n * d;
      for (int64_t i = 0; i < d; ++i) o[i] = 0.0f;
      for (int64_t k = 0; k < taps; ++k) {
        const int32_t row = indices.data_as<int32_t>()[n * taps + k];
        STRATA_CHECK(row >= 0 && row < table.dim(0));
        const float w = weights.data_as<float>()[n * taps + k];
        const float* src = table.data_as<float>() + row * d;
        for (int64_t i = 0; i < d; ++i) o[i] += w * src[i];
      }
    }
  });
}

}  // namespace strata::cpu
