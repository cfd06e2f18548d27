#include "strata/ops/embedding.h"

#include <algorithm>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/cpu/convert.h"

namespace strata::cpu {
namespace {

// out[t] = table[ids[t] - first_id]; an id past the table's rows is a broken invariant for a
// whole table, another rank's token (a row of zeros) for a shard.
void lookup(const Tensor& table, const Tensor& ids, int64_t first_id, bool shard, const Tensor& out) {
  const int64_t rows = table.dim(0), hidden = table.dim(1);
  const int32_t* id = ids.data_as<int32_t>();
  const char* base = static_cast<const char*>(table.data());
  const int64_t row_bytes = dtype_bytes(table.dtype(), hidden);
  parallel_for(ids.dim(0), 16, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t row = int64_t{id[t]} - first_id;
      const bool inside = row >= 0 && row < rows;
      STRATA_CHECK_MSG(inside || (shard && id[t] >= 0), "token id {} outside vocab {}", id[t], rows);
      float* dst = out.data_as<float>() + t * hidden;
      if (inside) {
        widen_to_f32(base + row * row_bytes, table.dtype(), hidden, dst);
      } else {
        std::fill_n(dst, hidden, 0.0f);
      }
    }
  });
}

}  // namespace

void embedding(const Tensor& table, const Tensor& ids, const Tensor& out) { lookup(table, ids, 0, false, out); }

void embedding_shard(const Tensor& table, const Tensor& ids, int64_t first_id, const Tensor& out) {
  lookup(table, ids, first_id, true, out);
}

}  // namespace strata::cpu
