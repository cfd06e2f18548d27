// Expert parallelism's token dispatch on the CPU: counting and packing (token, expert) pairs per
// destination rank are plain loops in pair order, so every rank sends its rows in a fixed order.
#include <algorithm>
#include <cstring>
#include <vector>

#include "strata/core/error.h"
#include "strata/ops/moe.h"

namespace strata::cpu {
namespace {

// The rank holding expert `id` of `num_experts` split over `ranks` by range.
int64_t rank_of(int32_t id, int64_t num_experts, int64_t ranks) {
  STRATA_CHECK_MSG(id >= 0 && id < num_experts, "expert id {} of {}", id, num_experts);
  return id / (num_experts / ranks);
}

}  // namespace

void moe_count_by_rank(const Tensor& topk_ids, int64_t num_experts, const Tensor& counts) {
  const int64_t ranks = counts.dim(0);
  int32_t* count = counts.data_as<int32_t>();
  std::fill_n(count, ranks, 0);
  for (int64_t p = 0; p < topk_ids.numel(); ++p) ++count[rank_of(topk_ids.data_as<int32_t>()[p], num_experts, ranks)];
}

void moe_pack_by_rank(const Tensor& x, const Tensor& topk_ids, int64_t ranks, const ops::MoeDispatchRows& rows) {
  const int64_t capacity = rows.send_x.dim(0) / ranks, k = topk_ids.dim(1);
  const int64_t row_bytes = dtype_bytes(x.dtype(), x.dim(1));  // x may have no rows
  const int32_t* ids = topk_ids.data_as<int32_t>();
  int32_t* send_ids = rows.send_ids.data_as<int32_t>();
  std::fill_n(send_ids, rows.send_ids.numel(), static_cast<int32_t>(rows.num_experts));
  std::memset(rows.send_x.data(), 0, rows.send_x.nbytes());
  std::vector<int64_t> next(ranks, 0);  // rows filled per destination
  for (int64_t p = 0; p < topk_ids.numel(); ++p) {
    const int64_t q = rank_of(ids[p], rows.num_experts, ranks);
    STRATA_CHECK_MSG(next[q] < capacity, "rank {}'s pairs exceed the capacity {}", q, capacity);
    const int64_t row = q * capacity + next[q]++;
    send_ids[row] = ids[p];
    rows.pair_rows.data_as<int32_t>()[p] = static_cast<int32_t>(row);
    std::memcpy(static_cast<uint8_t*>(rows.send_x.data()) + row * row_bytes,
                static_cast<const uint8_t*>(x.data()) + (p / k) * row_bytes, row_bytes);
  }
}

}  // namespace strata::cpu
