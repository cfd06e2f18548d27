// CUDA twins of ops/compressed_kv.h. store_row_part: one block per source row, threads over its
// columns; rows with slot -1 (padding) or outside the rows are skipped. compress_kv_windows: one
// block per entry, a thread per channel runs the window's softmax online, then a block RMS norm.
#include "strata/ops/compressed_kv.h"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

__global__ void store_row_part_kernel(const float* src, const int32_t* slots, float* rows, int64_t n,
                                      int64_t num_slots, int64_t row_width, int64_t column) {
  const int64_t i = blockIdx.x;
  const int32_t slot = slots[i];
  if (slot < 0 || slot >= num_slots) return;
  for (int64_t c = threadIdx.x; c < n; c += blockDim.x) rows[slot * row_width + column + c] = src[i * n + c];
}

struct CompressKernelParams {
  const float* rows;          // [num_slots, row_width]
  const int32_t* slots;       // [E, places]
  const float* bias;          // [rate, width]
  const float* norm_weight;   // [d]
  float* out;                 // [E, d]
  int64_t num_slots, row_width, d, rate, places, width, kv_offset, gate_offset;
  float eps;
};

// Channel c of entry e before the norm: the gated sum over the window's places (series B of the
// current window past `rate` with overlap), softmax weights online in f32.
__device__ float pool_channel(const CompressKernelParams& p, int64_t e, int64_t c) {
  float mx = -INFINITY, sum = 0.f, acc = 0.f;
  for (int64_t j = 0; j < p.places; ++j) {
    const int32_t slot = p.slots[e * p.places + j];
    if (slot < 0 || slot >= p.num_slots) continue;
    const int64_t channel = j >= p.rate ? p.d + c : c;
    const float* row = p.rows + slot * p.row_width;
    const float gate = row[p.gate_offset + channel] + p.bias[(j % p.rate) * p.width + channel];
    const float kv = row[p.kv_offset + channel];
    if (gate > mx) {
      const float shrink = expf(mx - gate);  // 0 on the first place
      sum *= shrink, acc *= shrink, mx = gate;
    }
    const float w = expf(gate - mx);
    sum += w, acc += w * kv;
  }
  return sum > 0.f ? acc / sum : 0.f;
}

__global__ void compress_kv_windows_kernel(CompressKernelParams p) {
  __shared__ float scratch[32];
  const int64_t e = blockIdx.x;
  float* out = p.out + e * p.d;
  float sum_sq = 0.f;
  for (int64_t c = threadIdx.x; c < p.d; c += blockDim.x) {
    const float v = pool_channel(p, e, c);
    out[c] = v;
    sum_sq += v * v;
  }
  const float inv = rsqrtf(block_sum(sum_sq, scratch) / static_cast<float>(p.d) + p.eps);
  for (int64_t c = threadIdx.x; c < p.d; c += blockDim.x) out[c] = p.norm_weight[c] * (out[c] * inv);
}

}  // namespace

void compress_kv_windows(const Tensor& rows, const Tensor& window_slots, const Tensor& position_bias,
                         const Tensor& norm_weight, const ops::CompressedKvParams& params, const Tensor& out) {
  const int64_t entries = window_slots.dim(0);
  if (entries == 0) return;
  const CompressKernelParams p{.rows = rows.data_as<float>(), .slots = window_slots.data_as<int32_t>(),
                               .bias = position_bias.data_as<float>(), .norm_weight = norm_weight.data_as<float>(),
                               .out = out.data_as<float>(), .num_slots = rows.dim(0), .row_width = rows.dim(1),
                               .d = params.head_dim, .rate = params.rate, .places = window_slots.dim(1),
                               .width = position_bias.dim(1), .kv_offset = params.kv_offset,
                               .gate_offset = params.gate_offset, .eps = params.eps};
  compress_kv_windows_kernel<<<static_cast<unsigned>(entries), 128, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

void store_row_part(const Tensor& src, const Tensor& slots, int64_t column, const Tensor& rows) {
  store_row_part_kernel<<<static_cast<unsigned>(src.dim(0)), 128, 0, current_stream()>>>(
      src.data_as<float>(), slots.data_as<int32_t>(), rows.data_as<float>(), src.dim(1), rows.dim(0), rows.dim(1),
      column);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
