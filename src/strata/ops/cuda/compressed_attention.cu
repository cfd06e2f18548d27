// CUDA twins of ops/cpu/compressed_attention.cpp. The lightning indexer's top-k (Qwen4-Exp's QSA
// uses it with unit head weights): one block per query, its closed entries' scores into the
// caller's scratch row, then top_k rounds of a block argmax (ties to the lower index, as the
// CPU's sort), each winner masked out after it is taken. DeepSeek-V4's attention: one block per
// (query, head), its keys (window, then entries) in tiles of kKeyTile with an online softmax.
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

constexpr int kKeyTile = 64;
constexpr int kAttentionThreads = 128;

struct AttentionKernelParams {
  const float* q;          // [T, heads, d]
  const float* rows;       // [num_slots, row_width]
  const float* sinks;      // [heads]
  const int32_t* selected; // [T, k] or null: every closed entry
  float* out;              // [T, heads, d]
  CacheRowsMeta meta;
  int64_t heads, d, window, rate, entry_offset, k;
  float scale;
};

// Key j of the query at `place`: the window's tokens oldest first, then its entries; null when
// the entry is absent (-1, not closed) or its slot is out of the rows.
__device__ const float* key_of(const AttentionKernelParams& p, const QueryPlace& place, int64_t t, int64_t first,
                               int64_t window_keys, int64_t j) {
  if (j < window_keys) {
    const int64_t slot = slot_at(p.meta, place, first + j);
    return slot < 0 ? nullptr : p.rows + slot * p.meta.row_width;
  }
  const int64_t closed = (place.position + 1) / p.rate;
  const int64_t w = p.selected != nullptr ? p.selected[t * p.k + (j - window_keys)] : j - window_keys;
  if (w < 0 || w >= closed) return nullptr;
  const int64_t slot = slot_at(p.meta, place, w * p.rate + p.rate - 1);
  return slot < 0 ? nullptr : p.rows + slot * p.meta.row_width + p.entry_offset;
}

__device__ float block_max(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  float total = lane < blockDim.x / 32 ? scratch[lane] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1) total = fmaxf(total, __shfl_xor_sync(0xffffffffu, total, o));
  return total;
}

// The sink starts the softmax (max = sink, sum = 1); each tile's logits come from one warp per
// key (lanes over dims), then threads over dims rescale and add the tile's weighted keys.
__global__ void compressed_attention_kernel(AttentionKernelParams p) {
  __shared__ float weights[kKeyTile];
  __shared__ const float* keys[kKeyTile];
  __shared__ float scratch[32];
  const int64_t t = blockIdx.x, h = blockIdx.y;
  const QueryPlace place = query_place(p.meta, t);
  const int64_t first = place.position - p.window + 1 > 0 ? place.position - p.window + 1 : 0;
  const int64_t window_keys = place.position + 1 - first;
  const int64_t entries = p.rate == 0 ? 0 : (p.selected != nullptr ? p.k : (place.position + 1) / p.rate);
  const int64_t n = window_keys + entries;
  const float* qh = p.q + (t * p.heads + h) * p.d;
  float* o = p.out + (t * p.heads + h) * p.d;
  for (int64_t i = threadIdx.x; i < p.d; i += blockDim.x) o[i] = 0.f;
  float mx = p.sinks[h], sum = 1.f;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int64_t start = 0; start < n; start += kKeyTile) {
    const int64_t count = n - start < kKeyTile ? n - start : kKeyTile;
    for (int64_t j = warp; j < count; j += warps) {
      const float* key = key_of(p, place, t, first, window_keys, start + j);
      float dot = 0.f;
      for (int64_t i = lane; i < p.d && key != nullptr; i += 32) dot += qh[i] * key[i];
      for (int off = 16; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      if (lane == 0) weights[j] = key != nullptr ? dot * p.scale : -INFINITY, keys[j] = key;
    }
    __syncthreads();
    const float tile_max = block_max(threadIdx.x < count ? weights[threadIdx.x] : -INFINITY, scratch);
    const float new_max = fmaxf(mx, tile_max), shrink = expf(mx - new_max);
    __syncthreads();  // every thread has read its logit before the weights replace them
    if (threadIdx.x < count) weights[threadIdx.x] = keys[threadIdx.x] != nullptr ? expf(weights[threadIdx.x] - new_max) : 0.f;
    sum = sum * shrink + block_sum(threadIdx.x < count ? weights[threadIdx.x] : 0.f, scratch);  // syncs
    for (int64_t i = threadIdx.x; i < p.d; i += blockDim.x) {
      float acc = o[i] * shrink;
      for (int64_t j = 0; j < count; ++j)
        if (keys[j] != nullptr) acc += weights[j] * keys[j][i];
      o[i] = acc;
    }
    mx = new_max;
    __syncthreads();  // the next tile overwrites weights and keys
  }
  for (int64_t i = threadIdx.x; i < p.d; i += blockDim.x) o[i] /= sum;
}

}  // namespace

void compressed_attention(const Tensor& q, const Tensor& rows, const ops::AttentionMetadata& meta,
                          const ops::CompressedAttentionParams& params, const Tensor& out) {
  static_assert(kKeyTile <= kAttentionThreads, "a thread per key of a tile");
  const bool selected = params.selected.defined();
  const AttentionKernelParams p{.q = q.data_as<float>(), .rows = rows.data_as<float>(),
                                .sinks = params.sinks.data_as<float>(),
                                .selected = selected ? params.selected.data_as<int32_t>() : nullptr,
                                .out = out.data_as<float>(), .meta = cache_rows_meta(meta, params.block_size, rows),
                                .heads = q.dim(1), .d = params.head_dim, .window = params.sliding_window,
                                .rate = params.rate, .entry_offset = params.entry_offset,
                                .k = selected ? params.selected.dim(1) : 0, .scale = params.scale};
  const dim3 grid(static_cast<unsigned>(q.dim(0)), static_cast<unsigned>(q.dim(1)));
  compressed_attention_kernel<<<grid, kAttentionThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

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
