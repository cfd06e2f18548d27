// Which part of a MoE layer's routed experts a tensor-parallel rank holds, as vLLM splits them:
// by default every expert's intermediate columns [r * I / N, (r + 1) * I / N) (tensor parallelism
// inside the experts); with --enable-expert-parallel the experts [r * E / N, (r + 1) * E / N) whole.
// Either way the ranks' partial outputs sum to the layer's output in one all-reduce.
#pragma once

#include <cstdint>
#include <string>

#include "strata/core/dtype.h"
#include "strata/model/model_weights.h"

namespace strata {

struct ExpertSplit {
  int64_t num_experts = 0;        // the layer's routed experts, all ranks
  int64_t intermediate_size = 0;  // per expert, all ranks
  int64_t first_expert = 0, num_local_experts = 0;    // experts [first, first + num) on this rank
  int64_t first_column = 0, num_local_columns = 0;    // of each expert's intermediate dimension
  int ranks = 1;

  bool splits_experts() const { return num_local_experts < num_experts; }
  bool splits_columns() const { return num_local_columns < intermediate_size; }
};

// This rank's part. Throws an Error naming the size that does not divide, and suggesting
// --enable-expert-parallel where splitting the experts instead would divide.
ExpertSplit expert_split(const TensorShard& shard, int64_t num_experts, int64_t intermediate_size);

// Refuses (an Error naming `tensor`, its block width and the sizes that would work) a column
// split that cuts the blocks of a tensor stored `dtype` along the intermediate dimension
// (down_proj's input: GGUF blocks of 32 or 256, FP8 blocks of 128).
void check_whole_blocks(const ExpertSplit& split, DType dtype, const std::string& tensor);

}  // namespace strata
