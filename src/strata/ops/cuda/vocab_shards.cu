// CUDA join of vocabulary shards: block (t, c) writes 256 vocabulary columns of token t, each
// thread reading its column's rank and offset from the gathered [N, T, S] logits.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/vocab_shards.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;

struct JoinVocabShardsParams {
  const float* shards;  // [N, T, S]
  float* out;           // [T, V]
  int64_t num_tokens;   // T
  int64_t shard_cols;   // S
  int64_t vocab;        // V
};

__global__ void join_vocab_shards_kernel(JoinVocabShardsParams p) {
  const int64_t t = blockIdx.x;
  const int64_t v = blockIdx.y * static_cast<int64_t>(kThreads) + threadIdx.x;
  if (v >= p.vocab) return;
  const int64_t rank = v / p.shard_cols, j = v - rank * p.shard_cols;
  p.out[t * p.vocab + v] = p.shards[(rank * p.num_tokens + t) * p.shard_cols + j];
}

}  // namespace

void join_vocab_shards(const Tensor& shards, const Tensor& out) {
  const JoinVocabShardsParams p{.shards = shards.data_as<float>(), .out = out.data_as<float>(),
                                .num_tokens = shards.dim(1), .shard_cols = shards.dim(2), .vocab = out.dim(1)};
  const dim3 grid(static_cast<unsigned>(p.num_tokens), static_cast<unsigned>((p.vocab + kThreads - 1) / kThreads));
  join_vocab_shards_kernel<<<grid, kThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
