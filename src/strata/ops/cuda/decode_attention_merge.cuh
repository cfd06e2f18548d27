// Decode attention's merges: a block's four warps into one (O, max, sum) per head in shared
// memory, then, when a row's keys span several blocks (splits), the last split to finish
// folds every split's partial into the output. The kernel is decode_attention.cu.
#pragma once

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/decode_attention.h"

namespace strata::cuda::decode_merge {

using bf16 = __nv_bfloat16;
constexpr int kWarps = 4;
constexpr int kMaxSplits = 64;
constexpr int kMaxGroup = 16;

struct DecodeParams {
  DecodeAttentionArgs a;
  float* partial_o;   // [splits, R, Hq, D] when num_splits > 1
  float* partial_ml;  // [splits, R, Hq, 2] (max, sum)
  int* arrivals;      // [R, Hkv] splits done so far; the last one merges and resets it to 0
  int group, num_splits;
};

// Running softmax state of the lane's two query rows (g and g + 8) and its O fragment.
template <int D>
struct Accum {
  float o[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
};

// Shared memory once the rings are drained: every warp's scaled O rows and (max, sum), then
// the block's merged (max, sum) and, for the cross-split merge, each split's weight.
template <int D>
struct MergeSmem {
  float o[kWarps][kMaxGroup][D];
  float m[kWarps][kMaxGroup], l[kWarps][kMaxGroup];
  float block_m[kMaxGroup], block_l[kMaxGroup], inv[kMaxGroup];
  float2 split_ml[kMaxGroup][kMaxSplits];  // (max, sum) in, (weight, -) after weighting
  int last;
};

__device__ __forceinline__ float sink_logit(const DecodeAttentionArgs& a, int head) {
  if (a.sinks == nullptr) return -INFINITY;
  return a.sinks_bf16 ? __bfloat162float(static_cast<const bf16*>(a.sinks)[head])
                      : static_cast<const float*>(a.sinks)[head];
}

// 1 / (sum e^(m - M) l + e^(sink - M)) scaled by e^(m - M), M = max(m, sink): the factor that
// turns an unnormalised O with running (m, l) into the attention output.
__device__ __forceinline__ float normaliser(const DecodeAttentionArgs& a, int head, float m, float l) {
  const float sink = sink_logit(a, head);
  const float mf = fmaxf(m, sink);
  const float factor = m == -INFINITY ? 0.0f : __expf(m - mf);
  const float denom = l * factor + (a.sinks != nullptr ? __expf(sink - mf) : 0.0f);
  return denom > 0.0f ? factor / denom : 0.0f;
}

// The block's warps into one (O, max, sum) per head: O rows land in sm.o[0], (max, sum) in
// sm.block_m / sm.block_l. The rings are drained, so their memory holds the merge.
template <int D>
__device__ void merge_warps(const DecodeParams& p, const Accum<D>& acc, MergeSmem<D>& sm) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
  __syncthreads();  // every warp is out of its ring
  if (qd == 0) {
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      sm.m[warp][g + 8 * rr] = acc.m[rr];
      sm.l[warp][g + 8 * rr] = acc.l[rr];
    }
  }
  __syncthreads();
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int h = g + 8 * rr;
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, sm.m[w][h]);
    const float scale = acc.m[rr] == -INFINITY ? 0.0f : __expf(acc.m[rr] - mx);
#pragma unroll
    for (int nd = 0; nd < D / 8; ++nd)
      *reinterpret_cast<float2*>(&sm.o[warp][h][nd * 8 + 2 * qd]) =
          make_float2(acc.o[nd][2 * rr] * scale, acc.o[nd][2 * rr + 1] * scale);
  }
  if (threadIdx.x < p.group) {
    const int h = threadIdx.x;
    float mx = -INFINITY, sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) mx = fmaxf(mx, sm.m[w][h]);
    for (int w = 0; w < kWarps; ++w) sum += sm.m[w][h] == -INFINITY ? 0.0f : sm.l[w][h] * __expf(sm.m[w][h] - mx);
    sm.block_m[h] = mx;
    sm.block_l[h] = sum;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < p.group * D; i += kWarps * 32) {
    const int h = i / D, d = i % D;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += sm.o[w][h][d];
    sm.o[0][h][d] = sum;  // only this thread reads or writes (h, d) here
  }
  __syncthreads();
}

// Head h's output dim d in the merged O: an e4m3 cache's O column c of dim block nd (stored
// at nd * 8 + c) is dim c * D / 8 + nd.
template <int D, bool kFp8>
__device__ __forceinline__ float merged_o(const MergeSmem<D>& sm, int h, int d) {
  return kFp8 ? sm.o[0][h][d % (D / 8) * 8 + d / (D / 8)] : sm.o[0][h][d];
}

// A split alone answers the row: normalise the block's O straight into the output.
template <int D, bool kFp8>
__device__ void write_output(const DecodeParams& p, MergeSmem<D>& sm, int row, int kv_head) {
  if (threadIdx.x < p.group) {
    const int h = threadIdx.x;
    sm.inv[h] = normaliser(p.a, kv_head * p.group + h, sm.block_m[h], sm.block_l[h]);
  }
  __syncthreads();
  const int64_t base = (static_cast<int64_t>(row) * p.a.num_q_heads + kv_head * p.group) * D;
  for (int i = threadIdx.x; i < p.group * D; i += kWarps * 32)
    p.a.out[base + i] = __float2bfloat16_rn(merged_o<D, kFp8>(sm, i / D, i % D) * sm.inv[i / D]);
}

// This split's partial (O, max, sum) per head, for the merging split to read.
template <int D, bool kFp8>
__device__ void write_partial(const DecodeParams& p, const MergeSmem<D>& sm, int row, int kv_head, int split) {
  const int64_t base = (static_cast<int64_t>(split) * p.a.num_rows + row) * p.a.num_q_heads + kv_head * p.group;
  for (int i = threadIdx.x; i < p.group * D; i += kWarps * 32) p.partial_o[base * D + i] = merged_o<D, kFp8>(sm, i / D, i % D);
  if (threadIdx.x < p.group)
    reinterpret_cast<float2*>(p.partial_ml)[base + threadIdx.x] =
        make_float2(sm.block_m[threadIdx.x], sm.block_l[threadIdx.x]);
}

// Run by the last live split to finish: out = sum_s e^(m_s - M) O_s / (sum_s e^(m_s - M) l_s
// + e^(sink - M)). Every (head, split) weight is computed first, so the O reads of all splits
// are in flight together; partials are read with __ldcg (other blocks wrote them).
template <int D>
__device__ void merge_splits(const DecodeParams& p, MergeSmem<D>& sm, int row, int kv_head, int live) {
  const int64_t split_stride = static_cast<int64_t>(p.a.num_rows) * p.a.num_q_heads;
  const int64_t base = static_cast<int64_t>(row) * p.a.num_q_heads + kv_head * p.group;
  for (int i = threadIdx.x; i < p.group * live; i += kWarps * 32) {
    const int h = i / live, s = i % live;
    sm.split_ml[h][s] = __ldcg(reinterpret_cast<const float2*>(p.partial_ml) + s * split_stride + base + h);
  }
  __syncthreads();
  if (threadIdx.x < p.group) {
    const int h = threadIdx.x;
    float mx = -INFINITY, sum = 0.0f;
    for (int s = 0; s < live; ++s) mx = fmaxf(mx, sm.split_ml[h][s].x);
    for (int s = 0; s < live; ++s) {
      const float2 ml = sm.split_ml[h][s];
      const float w = ml.x == -INFINITY ? 0.0f : __expf(ml.x - mx);
      sum += w * ml.y;
      sm.split_ml[h][s].x = w;
    }
    sm.inv[h] = normaliser(p.a, kv_head * p.group + h, mx, sum);
  }
  __syncthreads();
  constexpr int kBatch = 8;  // partial rows in flight: each is an L2 round trip
  for (int i = threadIdx.x; i < p.group * (D / 4); i += kWarps * 32) {
    const int h = i / (D / 4), d4 = i % (D / 4);
    const float4* src = reinterpret_cast<const float4*>(p.partial_o + (base + h) * D) + d4;
    float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int s0 = 0; s0 < live; s0 += kBatch) {
      float4 v[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
        v[u] = s0 + u < live ? __ldcg(src + (s0 + u) * split_stride * (D / 4)) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const float w = s0 + u < live ? sm.split_ml[h][s0 + u].x : 0.0f;
        acc.x += w * v[u].x, acc.y += w * v[u].y, acc.z += w * v[u].z, acc.w += w * v[u].w;
      }
    }
    const float inv = sm.inv[h];
    bf16* dst = p.a.out + (base + h) * D + d4 * 4;
    *reinterpret_cast<uint2*>(dst) = make_uint2(pack_bf16(acc.x * inv, acc.y * inv), pack_bf16(acc.z * inv, acc.w * inv));
  }
}

// Counts this split in; the last live split of (row, KV head) to arrive merges them all.
template <int D>
__device__ void arrive_and_merge(const DecodeParams& p, MergeSmem<D>& sm, int row, int kv_head, int live) {
  __syncthreads();  // the block's partial writes are issued
  int* counter = p.arrivals + static_cast<int64_t>(row) * p.a.num_kv_heads + kv_head;
  if (threadIdx.x == 0) {
    __threadfence();  // this split's partials are visible before it is counted
    sm.last = atomicAdd(counter, 1) == live - 1;
  }
  __syncthreads();
  if (!sm.last) return;
  __threadfence();
  merge_splits<D>(p, sm, row, kv_head, live);
  if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (and graph replay)
}

}  // namespace strata::cuda::decode_merge
