#include "strata/ops/vocab_shards.h"

#include <algorithm>
#include <cstring>

#include "strata/core/parallel.h"

namespace strata::cpu {

void join_vocab_shards(const Tensor& shards, const Tensor& out) {
  const int64_t num_ranks = shards.dim(0), num_tokens = shards.dim(1), shard_cols = shards.dim(2);
  const int64_t vocab = out.dim(1);
  const float* in = shards.data_as<float>();
  float* dst = out.data_as<float>();
  parallel_for(num_tokens, 4, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t)
      for (int64_t r = 0; r < num_ranks && r * shard_cols < vocab; ++r) {
        const int64_t cols = std::min(shard_cols, vocab - r * shard_cols);
        std::memcpy(dst + t * vocab + r * shard_cols, in + (r * num_tokens + t) * shard_cols, cols * sizeof(float));
      }
  });
}

}  // namespace strata::cpu
