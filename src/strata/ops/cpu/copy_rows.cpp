#include "strata/ops/copy_rows.h"

#include <cstring>

namespace strata::cpu {

void copy_rows(const Tensor& dst, const Tensor& src, std::span<const ops::RowCopy> copies) {
  const int64_t row_bytes = dst.row_bytes();
  char* out = static_cast<char*>(dst.data());
  const char* in = static_cast<const char*>(src.data());
  for (const ops::RowCopy& c : copies) std::memcpy(out + c.dst_row * row_bytes, in + c.src_row * row_bytes, row_bytes);
}

}  // namespace strata::cpu
