// Row lists for loading a rank's part of fused weights (WeightScope::rows): each part's rows are
// picked on their own and the parts concatenated in the order the layer reads them.
#pragma once

#include <cstdint>
#include <vector>

namespace strata {

// offset + [begin, end)
inline std::vector<int64_t> index_range(int64_t begin, int64_t end, int64_t offset = 0) {
  std::vector<int64_t> rows;
  for (int64_t i = begin; i < end; ++i) rows.push_back(offset + i);
  return rows;
}

inline void append_rows(std::vector<int64_t>& rows, const std::vector<int64_t>& more) {
  rows.insert(rows.end(), more.begin(), more.end());
}

}  // namespace strata
