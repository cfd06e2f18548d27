// CUDA twins of QSA attention and block pooling (ops/cpu/block_sparse_attention.cpp), f32. One
// block per (query, head): the query's candidate positions are its K selected blocks' tokens then
// the tail after its last complete block ((K + 1) * rate places, unused ones masked); their logits
// sit in shared memory for the softmax, then threads over head dims sum the values.
#include "strata/ops/block_sparse_attention.h"
#include "strata/ops/cuda/cache_rows.cuh"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

struct QsaParams {
  const float* q;            // [T, heads, d]
  const float* k_rows;       // [num_slots, row_width]
  const float* v_rows;       // [num_slots, row_width]
  const int32_t* selected;   // [T, K]
  float* out;                // [T, heads, d]
  CacheRowsMeta rows;
  int64_t heads, group, d, k, rate;  // group: query heads per kv head
  float scale;
};

// Candidate j of query t: its slot, or -1 when masked (no block, a block not closed, past the tail).
__device__ int64_t candidate_slot(const QsaParams& p, const QueryPlace& place, int64_t t, int64_t j) {
  const int64_t closed = (place.position + 1) / p.rate;
  int64_t position;
  if (j < p.k * p.rate) {
    const int32_t block = p.selected[t * p.k + j / p.rate];
    if (block < 0 || block >= closed) return -1;
    position = block * p.rate + j % p.rate;
  } else {
    position = closed * p.rate + (j - p.k * p.rate);
    if (position > place.position) return -1;
  }
  return slot_at(p.rows, place, position);
}

__global__ void block_sparse_attention_kernel(QsaParams p) {
  extern __shared__ float logits[];  // [(K + 1) * rate]
  __shared__ float scratch[32];
  __shared__ int best_index[32];
  const int64_t t = blockIdx.x, h = blockIdx.y, n = (p.k + 1) * p.rate;
  const int64_t head_offset = (h / p.group) * p.d;
  const QueryPlace place = query_place(p.rows, t);
  const float* qh = p.q + (t * p.heads + h) * p.d;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const int64_t slot = candidate_slot(p, place, t, j);
    float s = -INFINITY;
    if (slot >= 0) {
      const float* key = p.k_rows + slot * p.rows.row_width + head_offset;
      s = 0.f;
      for (int64_t i = 0; i < p.d; ++i) s += qh[i] * key[i];
      s *= p.scale;
    }
    logits[j] = s;
  }
  __syncthreads();
  float mx;
  int unused;
  block_max_of(logits, n, mx, unused, scratch, best_index);
  float sum = 0.f;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const float w = logits[j] == -INFINITY ? 0.f : expf(logits[j] - mx);
    logits[j] = w;
    sum += w;
  }
  sum = block_sum(sum, scratch);  // syncs: every weight is written
  float* o = p.out + (t * p.heads + h) * p.d;
  for (int64_t i = threadIdx.x; i < p.d; i += blockDim.x) {
    float acc = 0.f;
    for (int64_t j = 0; j < n; ++j) {
      if (logits[j] == 0.f) continue;
      acc += logits[j] * p.v_rows[candidate_slot(p, place, t, j) * p.rows.row_width + head_offset + i];
    }
    o[i] = acc / sum;
  }
}

__global__ void mean_row_windows_kernel(const float* rows, const int32_t* window_slots, float* out, int64_t num_slots,
                                        int64_t row_width, int64_t size, int64_t column, int64_t d) {
  const int64_t e = blockIdx.x;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    float acc = 0.f;
    for (int64_t j = 0; j < size; ++j) {
      const int32_t slot = window_slots[e * size + j];
      if (slot >= 0 && slot < num_slots) acc += rows[slot * row_width + column + i];
    }
    out[e * d + i] = acc / static_cast<float>(size);
  }
}

}  // namespace

void block_sparse_attention(const Tensor& q, const Tensor& k_rows, const Tensor& v_rows,
                            const ops::AttentionMetadata& meta, const ops::BlockSparseAttentionParams& params,
                            const Tensor& out) {
  const int64_t k = params.selected.dim(1), positions = (k + 1) * params.rate;
  // refused at model build past this (ops::check_block_sparse_attention_supported)
  STRATA_CHECK(positions <= ops::kCudaMaxQsaPositions);
  const QsaParams p{.q = q.data_as<float>(), .k_rows = k_rows.data_as<float>(), .v_rows = v_rows.data_as<float>(),
                    .selected = params.selected.data_as<int32_t>(), .out = out.data_as<float>(),
                    .rows = cache_rows_meta(meta, params.block_size, k_rows), .heads = q.dim(1),
                    .group = q.dim(1) / params.num_kv_heads, .d = params.head_dim, .k = k, .rate = params.rate,
                    .scale = params.scale};
  const dim3 grid(static_cast<unsigned>(q.dim(0)), static_cast<unsigned>(q.dim(1)));
  block_sparse_attention_kernel<<<grid, 128, positions * sizeof(float), current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

void mean_row_windows(const Tensor& rows, const Tensor& window_slots, int64_t column, const Tensor& out) {
  mean_row_windows_kernel<<<static_cast<unsigned>(out.dim(0)), 128, 0, current_stream()>>>(
      rows.data_as<float>(), window_slots.data_as<int32_t>(), out.data_as<float>(), rows.dim(0), rows.dim(1),
      window_slots.dim(1), column, out.dim(1));
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
