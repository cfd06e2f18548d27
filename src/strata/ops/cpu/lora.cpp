#include "strata/ops/lora.h"

#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata::cpu {

void lora_add(const ops::LoraArgs& args) {
  STRATA_CHECK(args.x.dtype() == DType::kF32 && args.y.dtype() == DType::kF32 && args.a.dtype() == DType::kF32 &&
               args.b.dtype() == DType::kF32);
  const int64_t tokens = args.x.dim(0), in = args.x.dim(1), rank = args.a.dim(1), out = args.b.dim(1);
  const int64_t slots = args.a.dim(0), cols = args.y.dim(1);
  parallel_for(tokens, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> mid(rank);
    for (int64_t t = begin; t < end; ++t) {
      const int32_t s = args.token_slots.data_as<const int32_t>()[t];
      if (s < 0) continue;
      STRATA_CHECK(s < slots);
      const float* x = args.x.data_as<const float>() + t * in;
      const float* a = args.a.data_as<const float>() + s * rank * in;
      const float* b = args.b.data_as<const float>() + s * out * rank;
      for (int64_t r = 0; r < rank; ++r) {
        double acc = 0;
        for (int64_t i = 0; i < in; ++i) acc += static_cast<double>(a[r * in + i]) * x[i];
        mid[r] = acc;
      }
      const double scale = args.scales.data_as<const float>()[s];
      float* y = args.y.data_as<float>() + t * cols + args.col_offset;
      for (int64_t o = 0; o < out; ++o) {
        double acc = 0;
        for (int64_t r = 0; r < rank; ++r) acc += static_cast<double>(b[o * rank + r]) * mid[r];
        y[o] += static_cast<float>(scale * acc);
      }
    }
  });
}

}  // namespace strata::cpu
