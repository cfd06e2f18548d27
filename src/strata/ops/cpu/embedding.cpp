#include "strata/ops/embedding.h"

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"

namespace strata::cpu {

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) {
  const int64_t vocab = table.dim(0), hidden = table.dim(1);
  const int32_t* id = ids.data_as<int32_t>();
  const char* base = static_cast<const char*>(table.data());
  const int64_t row_bytes = dtype_bytes(table.dtype(), hidden);
  parallel_for(ids.dim(0), 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      STRATA_CHECK_MSG(id[t] >= 0 && id[t] < vocab, "token id {} outside vocab {}", id[t], vocab);
      widen_to_f32(base + id[t] * row_bytes, table.dtype(), hidden, out.data_as<float>() + t * hidden);
    }
  });
}

}  // namespace strata::cpu
