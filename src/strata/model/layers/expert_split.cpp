#include "strata/model/layers/expert_split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "strata/core/error.h"

namespace strata {
namespace {

// ", or add --enable-expert-parallel ..." where N divides the experts; "" otherwise.
std::string expert_parallel_hint(int64_t num_experts, int ranks) {
  if (num_experts % ranks != 0) return "";
  return fmt::format(", or add --enable-expert-parallel to give each rank {} of the {} experts whole",
                     num_experts / ranks, num_experts);
}

}  // namespace

ExpertSplit expert_split(const TensorShard& shard, int64_t num_experts, int64_t intermediate_size) {
  ExpertSplit split{.num_experts = num_experts, .intermediate_size = intermediate_size,
                    .num_local_experts = num_experts, .num_local_columns = intermediate_size, .ranks = shard.size};
  if (shard.size == 1) return split;
  if (shard.expert_parallel) {
    const auto [begin, end] = shard.range(num_experts, "num_experts");
    split.first_expert = begin;
    split.num_local_experts = end - begin;
    return split;
  }
  if (intermediate_size % shard.size != 0)
    fail("--tensor-parallel-size {} does not divide the experts' intermediate size ({}); choose a size that "
         "does{}", shard.size, intermediate_size, expert_parallel_hint(num_experts, shard.size));
  split.num_local_columns = intermediate_size / shard.size;
  split.first_column = shard.rank * split.num_local_columns;
  return split;
}

void check_whole_blocks(const ExpertSplit& split, DType dtype, const std::string& tensor) {
  const int64_t block = dtype_block_elems(dtype);
  if (!split.splits_columns() || split.num_local_columns % block == 0) return;
  std::vector<int64_t> sizes;
  for (int64_t n = 1; n <= split.intermediate_size / block; ++n)
    if (split.intermediate_size % (n * block) == 0) sizes.push_back(n);
  fail("{}: stored as {} in blocks of {} values along the experts' intermediate size ({}), which "
       "--tensor-parallel-size {} cuts into {} columns a rank; choose a size that keeps blocks whole ({}){}",
       tensor, dtype_name(dtype), block, split.intermediate_size, split.ranks, split.num_local_columns,
       fmt::join(sizes, ", "), expert_parallel_hint(split.num_experts, split.ranks));
}

}  // namespace strata
