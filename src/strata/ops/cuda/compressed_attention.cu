// CUDA twin of the lightning indexer's top-k (ops/cpu/compressed_attention.cpp; Qwen4-Exp's QSA
// uses it with unit head weights); DeepSeek-V4's attention itself is CPU only. One block per
// query: its closed entries' scores into the caller's scratch row, then top_k rounds of a block
// argmax (ties to the lower index, as the CPU's sort), each winner masked out after it is taken.
#include "strata/ops/compressed_attention.h"
#include "strata/ops/cuda/cache_rows.cuh"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

struct IndexerKernelParams {
  const float* q;        // [T, heads, d]
  const float* weights;  // [T, heads] or null (every head weighs 1)
  const float* rows;     // [num_slots, row_width]
  float* scores;         // [T, scores_width] scratch
  int32_t* selected;     // [T, top_k]
  CacheRowsMeta meta;
  int64_t heads, d, rate, entry_offset, top_k, scores_width;
  float scale;
};

__global__ void indexer_top_k_kernel(IndexerKernelParams p) {
  __shared__ float vals[32];
  __shared__ int idxs[32];
  const int64_t t = blockIdx.x;
  const QueryPlace place = query_place(p.meta, t);
  const int64_t closed = (place.position + 1) / p.rate;
  float* scores = p.scores + t * p.scores_width;
  for (int64_t w = threadIdx.x; w < closed; w += blockDim.x) {
    const int64_t slot = slot_at(p.meta, place, w * p.rate + p.rate - 1);
    float total = 0.f;
    for (int64_t h = 0; h < p.heads && slot >= 0; ++h) {
      const float* qh = p.q + (t * p.heads + h) * p.d;
      const float* entry = p.rows + slot * p.meta.row_width + p.entry_offset;
      float dot = 0.f;
      for (int64_t i = 0; i < p.d; ++i) dot += qh[i] * entry[i];
      const float s = fmaxf(dot, 0.f) * p.scale;
      total += p.weights != nullptr ? s * p.weights[t * p.heads + h] : s;
    }
    scores[w] = total;
  }
  __syncthreads();
  for (int64_t j = 0; j < p.top_k; ++j) {
    float best = -INFINITY;
    int best_index = -1;
    if (j < closed) block_max_of(scores, closed, best, best_index, vals, idxs);
    if (threadIdx.x == 0) {
      const bool taken = j < closed && best_index >= 0 && best_index < closed;
      p.selected[t * p.top_k + j] = taken ? best_index : -1;
      if (taken) scores[best_index] = -INFINITY;
    }
    __syncthreads();  // the winner is masked before the next round reads
  }
}

}  // namespace

void indexer_top_k(const Tensor& q, const Tensor& weights, const Tensor& rows, const ops::AttentionMetadata& meta,
                   const ops::IndexerParams& params, const Tensor& selected) {
  const IndexerKernelParams p{.q = q.data_as<float>(),
                              .weights = weights.defined() ? weights.data_as<float>() : nullptr,
                              .rows = rows.data_as<float>(), .scores = params.scores.data_as<float>(),
                              .selected = selected.data_as<int32_t>(),
                              .meta = cache_rows_meta(meta, params.block_size, rows), .heads = q.dim(1),
                              .d = params.head_dim, .rate = params.rate, .entry_offset = params.entry_offset,
                              .top_k = params.top_k, .scores_width = params.scores.dim(1), .scale = params.scale};
  indexer_top_k_kernel<<<static_cast<unsigned>(q.dim(0)), 256, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
