#include <cmath>

#include "strata/core/error.h"
#include "strata/ops/logits_mask.h"

namespace strata::cpu {

void mask_logits(const Tensor& logits, const Tensor& rows, const Tensor& bits) {
  const int64_t vocab = logits.dim(1), words = bits.dim(1);
  for (int64_t m = 0; m < rows.dim(0); ++m) {
    const int32_t row = rows.data_as<const int32_t>()[m];
    STRATA_CHECK(row >= 0 && row < logits.dim(0));
    float* l = logits.data_as<float>() + row * vocab;
    const auto* b = reinterpret_cast<const uint32_t*>(bits.data_as<const int32_t>() + m * words);
    for (int64_t v = 0; v < vocab; ++v)
      if (((b[v / 32] >> (v % 32)) & 1u) == 0) l[v] = -INFINITY;
  }
}

}  // namespace strata::cpu
