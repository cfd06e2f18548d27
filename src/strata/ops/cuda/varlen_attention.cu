// CUDA bidirectional attention within segments (vision towers), flash-style in f32: one block
// per (64-query tile, head, segment) walks its segment's keys in tiles of 64 with an online
// softmax. Scores, running max and sum, and the output accumulators are f32 whatever the storage.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/varlen_attention.h"

namespace strata::cuda {
namespace {

constexpr int kTileQ = 64, kTileK = 64, kThreads = 256;
constexpr int kScoreStride = kTileK + 1;
static_assert(kTileQ == kTileK && kTileQ == 64, "load_rows fills 64-row tiles; the softmax gives each lane 2 columns");  // padded: a warp's rows of scores sit in different banks

struct VarlenAttentionParams {
  const void* q;              // [T, H, D]
  const void* k;              // [T, H, D]
  const void* v;              // [T, H, D]
  void* out;                  // [T, H, D]
  const int32_t* cu_seqlens;  // [S + 1]
  int64_t num_heads;
  int head_dim;
  float scale;
};

// q [kTileQ, D] (pre-scaled), k [kTileK, D + 1] (padded: the columns of one score row sit in
// different banks), v [kTileK, D], scores [kTileQ, kScoreStride], then each row's max, sum, rescale.
size_t shared_bytes(int d) {
  return sizeof(float) * (kTileQ * d + kTileK * (d + 1) + kTileK * d + kTileQ * kScoreStride + 3 * kTileQ);
}

// rows [first, first + rows) of one head (src points at the head, rows `stride` apart) into
// dst [rows, dst_stride] as f32 times `factor`; rows from `valid` on are zeros.
template <typename T>
__device__ void load_rows(const T* src, int64_t first, int valid, int64_t stride, int d, float* dst, int dst_stride,
                          float factor) {
  for (int i = threadIdx.x; i < kTileQ * d; i += kThreads) {
    const int r = i / d, c = i % d;
    dst[r * dst_stride + c] = r < valid ? to_f32(src[(first + r) * stride + c]) * factor : 0.0f;
  }
}

// Each row's new max over this tile's scores; scores become exp(score - max) and the row's
// sum and accumulators are rescaled by exp(old max - new max). Warp w takes rows w, w + 8, ...
__device__ void online_softmax(float* scores, float* row_max, float* row_sum, float* rescale) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = warp; r < kTileQ; r += kThreads / 32) {
    float* row = scores + r * kScoreStride;
    const float a = row[lane], b = row[lane + 32];
    float m = fmaxf(a, b);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    const float new_max = fmaxf(row_max[r], m);  // finite: every tile's first column is a key
    const float ea = expf(a - new_max), eb = expf(b - new_max);
    row[lane] = ea;
    row[lane + 32] = eb;
    float sum = ea + eb;
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) {
      const float factor = expf(row_max[r] - new_max);  // 0 on the first tile (max was -inf)
      rescale[r] = factor;
      row_sum[r] = row_sum[r] * factor + sum;
      row_max[r] = new_max;
    }
  }
}

// Scores of the tile: thread owns rows 4 (tid / 16) + a and columns tid % 16 + 16 b, a, b < 4;
// columns past the segment's end get -inf.
__device__ void tile_scores(const float* qs, const float* ks, int d, int num_k, float* scores) {
  const int row0 = 4 * (threadIdx.x / 16), col0 = threadIdx.x % 16;
  float s[4][4] = {};
  for (int c = 0; c < d; ++c) {
    float qv[4], kv[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) qv[a] = qs[(row0 + a) * d + c];
#pragma unroll
    for (int b = 0; b < 4; ++b) kv[b] = ks[(col0 + 16 * b) * (d + 1) + c];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) s[a][b] += qv[a] * kv[b];
  }
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int col = col0 + 16 * b;
      scores[(row0 + a) * kScoreStride + col] = col < num_k ? s[a][b] : -INFINITY;
    }
}

// kMaxD: the largest head size this instance takes (accumulators per thread: kMaxD / 4).
template <typename T, int kMaxD>
__global__ void __launch_bounds__(kThreads) varlen_attention_kernel(VarlenAttentionParams p) {
  extern __shared__ float shared[];
  const int d = p.head_dim, head = blockIdx.y;
  const int begin = p.cu_seqlens[blockIdx.z], end = p.cu_seqlens[blockIdx.z + 1];
  const int q0 = begin + blockIdx.x * kTileQ;
  if (q0 >= end) return;
  const int num_q = min(kTileQ, end - q0);
  float* qs = shared;
  float* ks = qs + kTileQ * d;
  float* vs = ks + kTileK * (d + 1);
  float* scores = vs + kTileK * d;
  float* row_max = scores + kTileQ * kScoreStride;
  float* row_sum = row_max + kTileQ;
  float* rescale = row_sum + kTileQ;
  const int64_t stride = p.num_heads * d;
  const T* q = static_cast<const T*>(p.q) + head * d;
  const T* k = static_cast<const T*>(p.k) + head * d;
  const T* v = static_cast<const T*>(p.v) + head * d;
  load_rows(q, q0, num_q, stride, d, qs, d, p.scale);
  for (int r = threadIdx.x; r < kTileQ; r += kThreads) row_max[r] = -INFINITY, row_sum[r] = 0.0f;
  const int out_row = threadIdx.x / 4, out_lane = threadIdx.x % 4;  // columns out_lane + 4 i
  float acc[kMaxD / 4] = {};
  for (int k0 = begin; k0 < end; k0 += kTileK) {
    const int num_k = min(kTileK, end - k0);
    __syncthreads();  // the previous tile's keys, values and scores are read
    load_rows(k, k0, num_k, stride, d, ks, d + 1, 1.0f);
    load_rows(v, k0, num_k, stride, d, vs, d, 1.0f);
    __syncthreads();
    tile_scores(qs, ks, d, num_k, scores);
    __syncthreads();
    online_softmax(scores, row_max, row_sum, rescale);
    __syncthreads();
    const float factor = rescale[out_row];
    const float* weights = scores + out_row * kScoreStride;
#pragma unroll
    for (int i = 0; i < kMaxD / 4; ++i) acc[i] *= factor;
    for (int j = 0; j < num_k; ++j) {
      const float w = weights[j];
      const float* value = vs + j * d + out_lane;
#pragma unroll
      for (int i = 0; i < kMaxD / 4; ++i)
        if (4 * i + out_lane < d) acc[i] += w * value[4 * i];
    }
  }
  if (out_row >= num_q) return;
  const float inv_sum = 1.0f / row_sum[out_row];
  T* out = static_cast<T*>(p.out) + (q0 + out_row) * stride + head * d;
#pragma unroll
  for (int i = 0; i < kMaxD / 4; ++i)
    if (4 * i + out_lane < d) out[4 * i + out_lane] = from_f32<T>(acc[i] * inv_sum);
}

template <typename T, int kMaxD>
void launch(const VarlenAttentionParams& p, dim3 grid) {
  const size_t bytes = shared_bytes(p.head_dim);
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(varlen_attention_kernel<T, kMaxD>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  varlen_attention_kernel<T, kMaxD><<<grid, kThreads, bytes, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_for_head_dim(const VarlenAttentionParams& p, dim3 grid) {
  if (p.head_dim <= 64) return launch<T, 64>(p, grid);
  launch<T, 128>(p, grid);
}

}  // namespace

void varlen_attention(const Tensor& q, const Tensor& k, const Tensor& v, const ops::VarlenSegments& segments,
                      float scale, const Tensor& out) {
  const int64_t num_segments = segments.cu_seqlens.numel() - 1;
  if (q.dim(0) == 0 || segments.max_seqlen == 0) return;
  STRATA_CHECK(num_segments <= 65535 && q.dim(1) <= 65535 && q.dim(0) <= INT32_MAX);
  const VarlenAttentionParams p{.q = q.data(), .k = k.data(), .v = v.data(), .out = out.data(),
                                .cu_seqlens = segments.cu_seqlens.data_as<int32_t>(), .num_heads = q.dim(1),
                                .head_dim = static_cast<int>(q.dim(2)), .scale = scale};
  const dim3 grid(static_cast<unsigned>(ceil_div(segments.max_seqlen, kTileQ)), static_cast<unsigned>(q.dim(1)),
                  static_cast<unsigned>(num_segments));
  if (q.dtype() == DType::kBF16) {
    launch_for_head_dim<__nv_bfloat16>(p, grid);
  } else if (q.dtype() == DType::kF32) {
    launch_for_head_dim<float>(p, grid);
  } else {
    unsupported_dtype("varlen_attention", q.dtype());
  }
}

}  // namespace strata::cuda
