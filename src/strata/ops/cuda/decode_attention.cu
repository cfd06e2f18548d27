// Decode attention: one warp per (row, KV head, key split). The warp's 16-row query tile
// holds the group's heads (rows past the group are zero); K/V tiles of 16 keys stream
// through a private cp.async ring in shared memory, scores and P·V run on mma.sync with
// ldmatrix fragments. Splits that find no keys write an empty partial; the last split of a
// (row, KV head) to finish merges them.
#include <algorithm>

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/cuda/decode_attention.h"
#include "strata/ops/cuda/device_scratch.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kTileKeys = 16;
constexpr int kMinKeysPerSplit = 64;
constexpr int kMaxSplits = 64;
constexpr int kMaxGroup = 16;
constexpr int64_t kMaxArrivalCounters = int64_t{1} << 16;

struct DecodeParams {
  DecodeAttentionArgs a;
  float* partial_o;   // [splits, R, Hq, D] when num_splits > 1
  float* partial_ml;  // [splits, R, Hq, 2] (max, sum)
  int* arrivals;      // [R, Hkv] splits done so far; the last one merges and resets it to 0
  int group, num_splits;
};

template <int D>
struct Ring {
  static constexpr int kLd = D + 8;  // padded rows: ldmatrix row addresses hit distinct banks
  static constexpr int kStages = D >= 256 ? 3 : 4;
  static constexpr int kTileElems = kTileKeys * kLd;
  static constexpr int kBytes = 2 * kStages * kTileElems * 2;
};

// Keys [key0, key0 + 16) of K and V into ring slot `stage`; keys at or past key_end zero-filled.
template <int D>
__device__ void load_tile(const DecodeParams& p, const int32_t* table, int kv_head, int key0, int key_end,
                          bf16* ks, bf16* vs) {
  constexpr int kChunks = D / 8;
  const int lane = threadIdx.x;
  for (int c = lane; c < kTileKeys * kChunks; c += 32) {
    const int i = c / kChunks, ch = c % kChunks, key = key0 + i;
    const bool valid = key < key_end;
    int64_t off = 0;
    if (valid) {
      const int64_t slot = static_cast<int64_t>(table[key / p.a.block_size]) * p.a.block_size + key % p.a.block_size;
      off = (slot * p.a.num_kv_heads + kv_head) * D + ch * 8;
    }
    cp_async_16(ks + i * Ring<D>::kLd + ch * 8, p.a.k_cache + off, valid);
    cp_async_16(vs + i * Ring<D>::kLd + ch * 8, p.a.v_cache + off, valid);
  }
}

// Running softmax state of the lane's two query rows (g and g + 8) and its O fragment.
template <int D>
struct Accum {
  float o[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY};
  float l[2] = {0.0f, 0.0f};
};

template <int D>
__device__ void score_tile(const DecodeParams& p, const uint32_t (&qa)[D / 16][4], const bf16* ks, int key0,
                           int key_end, float (&s)[2][4]) {
  const int lane = threadIdx.x, g = lane / 4, qd = lane % 4;
  // ldmatrix matrix (lane / 8) covers keys (lane / 16) * 8.. and dims +8 when odd: b[0..1] are
  // the B fragment of keys 0-7, b[2..3] of keys 8-15.
  const bf16* row = ks + ((lane / 16) * 8 + lane % 8) * Ring<D>::kLd + ((lane / 8) % 2) * 8;
#pragma unroll
  for (int nt = 0; nt < 2; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    uint32_t b[4];
    ldmatrix_x4(b, row + kd * 16);
    mma_bf16_16816(s[0], qa[kd][0], qa[kd][1], qa[kd][2], qa[kd][3], b[0], b[1]);
    mma_bf16_16816(s[1], qa[kd][0], qa[kd][1], qa[kd][2], qa[kd][3], b[2], b[3]);
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int head_row = g + (i >= 2 ? 8 : 0), key = key0 + nt * 8 + 2 * qd + (i & 1);
      float v = s[nt][i] * p.a.scale;
      if (p.a.softcap > 0.0f) v = p.a.softcap * tanhf(v / p.a.softcap);
      s[nt][i] = head_row < p.group && key < key_end ? v : -INFINITY;
    }
  }
}

template <int D>
__device__ void softmax_pv(float (&s)[2][4], const bf16* vs, Accum<D>& acc) {
  const int lane = threadIdx.x;
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float mx = fmaxf(fmaxf(s[0][2 * rr], s[0][2 * rr + 1]), fmaxf(s[1][2 * rr], s[1][2 * rr + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(acc.m[rr], mx);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    const float alpha = __expf(acc.m[rr] - m_use);
    acc.m[rr] = m_new;
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      s[nt][2 * rr] = __expf(s[nt][2 * rr] - m_use);
      s[nt][2 * rr + 1] = __expf(s[nt][2 * rr + 1] - m_use);
      sum += s[nt][2 * rr] + s[nt][2 * rr + 1];
    }
    acc.l[rr] = acc.l[rr] * alpha + sum;
#pragma unroll
    for (int nd = 0; nd < D / 8; ++nd) {
      acc.o[nd][2 * rr] *= alpha;
      acc.o[nd][2 * rr + 1] *= alpha;
    }
  }
  const uint32_t a0 = pack_bf16(s[0][0], s[0][1]), a1 = pack_bf16(s[0][2], s[0][3]);
  const uint32_t a2 = pack_bf16(s[1][0], s[1][1]), a3 = pack_bf16(s[1][2], s[1][3]);
  // Transposed ldmatrix: matrix (lane / 8) covers keys ((lane / 8) % 2) * 8.. and dims (lane / 16) * 8..
  const bf16* row = vs + (((lane / 8) % 2) * 8 + lane % 8) * Ring<D>::kLd + (lane / 16) * 8;
#pragma unroll
  for (int nd2 = 0; nd2 < D / 16; ++nd2) {
    uint32_t b[4];
    ldmatrix_x4_trans(b, row + nd2 * 16);
    mma_bf16_16816(acc.o[2 * nd2], a0, a1, a2, a3, b[0], b[1]);
    mma_bf16_16816(acc.o[2 * nd2 + 1], a0, a1, a2, a3, b[2], b[3]);
  }
}

__device__ __forceinline__ float sink_logit(const DecodeAttentionArgs& a, int head) {
  if (a.sinks == nullptr) return -INFINITY;
  return a.sinks_bf16 ? __bfloat162float(static_cast<const bf16*>(a.sinks)[head])
                      : static_cast<const float*>(a.sinks)[head];
}

template <int D>
__device__ void write_result(const DecodeParams& p, Accum<D>& acc, int row, int kv_head, int split) {
  const int lane = threadIdx.x, g = lane / 4, qd = lane % 4;
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    acc.l[rr] += __shfl_xor_sync(0xffffffffu, acc.l[rr], 1);
    acc.l[rr] += __shfl_xor_sync(0xffffffffu, acc.l[rr], 2);
  }
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int head_row = g + rr * 8;
    if (head_row >= p.group) continue;
    const int head = kv_head * p.group + head_row;
    const int64_t base = static_cast<int64_t>(row) * p.a.num_q_heads + head;
    if (p.num_splits == 1) {
      const float sink = sink_logit(p.a, head);
      const float mf = fmaxf(acc.m[rr], sink);
      const float factor = acc.m[rr] == -INFINITY ? 0.0f : __expf(acc.m[rr] - mf);
      const float denom = acc.l[rr] * factor + (p.a.sinks != nullptr ? __expf(sink - mf) : 0.0f);
      const float inv = denom > 0.0f ? factor / denom : 0.0f;
      bf16* dst = p.a.out + base * D + 2 * qd;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd)
        *reinterpret_cast<uint32_t*>(dst + nd * 8) = pack_bf16(acc.o[nd][2 * rr] * inv, acc.o[nd][2 * rr + 1] * inv);
    } else {
      const int64_t pbase = static_cast<int64_t>(split) * p.a.num_rows * p.a.num_q_heads + base;
      float* dst = p.partial_o + pbase * D + 2 * qd;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd)
        *reinterpret_cast<float2*>(dst + nd * 8) = make_float2(acc.o[nd][2 * rr], acc.o[nd][2 * rr + 1]);
      if (qd == 0) *reinterpret_cast<float2*>(p.partial_ml + pbase * 2) = make_float2(acc.m[rr], acc.l[rr]);
    }
  }
}

// Query fragments of the group's heads (A operand, rows >= group zero), read once.
template <int D>
__device__ void load_query(const DecodeParams& p, int row, int kv_head, uint32_t (&qa)[D / 16][4]) {
  const int lane = threadIdx.x, g = lane / 4, qd = lane % 4;
  const bool lo = g < p.group, hi = g + 8 < p.group;
  const bf16* q0 = p.a.q + (static_cast<int64_t>(row) * p.a.num_q_heads + kv_head * p.group + g) * D + 2 * qd;
  const bf16* q1 = q0 + 8 * D;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    qa[kd][0] = lo ? load_pair(q0 + kd * 16) : 0u;
    qa[kd][1] = hi ? load_pair(q1 + kd * 16) : 0u;
    qa[kd][2] = lo ? load_pair(q0 + kd * 16 + 8) : 0u;
    qa[kd][3] = hi ? load_pair(q1 + kd * 16 + 8) : 0u;
  }
}

// Run by the last split of (row, KV head) to finish: merges every split of the group's
// heads, out = sum_s e^(m_s - M) O_s / (sum_s e^(m_s - M) l_s + e^(sink - M)). Lane s holds
// split s and s + 32; partials are read with __ldcg (other blocks wrote them).
template <int D>
__device__ void merge_splits(const DecodeParams& p, int row, int kv_head) {
  const int lane = threadIdx.x;
  const int64_t split_stride = static_cast<int64_t>(p.a.num_rows) * p.a.num_q_heads;
  for (int h = 0; h < p.group; ++h) {
    const int head = kv_head * p.group + h;
    const int64_t base = static_cast<int64_t>(row) * p.a.num_q_heads + head;
    float m[2], l[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int s = lane + 32 * i;
      const float2 ml = s < p.num_splits ? __ldcg(reinterpret_cast<const float2*>(p.partial_ml) + s * split_stride + base)
                                         : make_float2(-INFINITY, 0.0f);
      m[i] = ml.x;
      l[i] = ml.y;
    }
    const float sink = sink_logit(p.a, head);
    float mx = fmaxf(fmaxf(m[0], m[1]), sink);
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
    float w[2], denom = 0.0f;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      w[i] = m[i] == -INFINITY ? 0.0f : __expf(m[i] - mx);
      denom += w[i] * l[i];
    }
    for (int o = 16; o > 0; o >>= 1) denom += __shfl_xor_sync(0xffffffffu, denom, o);
    if (p.a.sinks != nullptr) denom += __expf(sink - mx);
    const float inv = denom > 0.0f ? 1.0f / denom : 0.0f;
    constexpr int kPerLane = D / 32;
    constexpr int kBatch = 8;  // partial rows in flight: each is an L2 round trip
    float acc[kPerLane] = {};
    for (int s0 = 0; s0 < p.num_splits; s0 += kBatch) {
      float ws[kBatch], v[kBatch][kPerLane];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int s = s0 + u;
        ws[u] = __shfl_sync(0xffffffffu, s < 32 ? w[0] : w[1], s % 32);
        const float* src = p.partial_o + (s * split_stride + base) * D + lane * kPerLane;
        const bool live = s < p.num_splits && ws[u] != 0.0f;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) v[u][j] = live ? __ldcg(src + j) : 0.0f;
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u)
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) acc[j] += ws[u] * v[u][j];
    }
    bf16* dst = p.a.out + base * D + lane * kPerLane;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) dst[j] = __float2bfloat16_rn(acc[j] * inv);
  }
}

// Counts this split in; the last of (row, KV head) merges all splits.
template <int D>
__device__ void arrive_and_merge(const DecodeParams& p, int row, int kv_head) {
  __threadfence();  // this split's partials are visible before it is counted
  int* counter = p.arrivals + static_cast<int64_t>(row) * p.a.num_kv_heads + kv_head;
  int last = 0;
  if (threadIdx.x == 0) last = atomicAdd(counter, 1) == p.num_splits - 1;
  last = __shfl_sync(0xffffffffu, last, 0);
  if (!last) return;
  __threadfence();
  merge_splits<D>(p, row, kv_head);
  if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (and graph replay)
}

template <int D>
__global__ void __launch_bounds__(32) decode_attention_kernel(DecodeParams p) {
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  wait_for_previous_kernel();
  extern __shared__ __align__(16) unsigned char smem[];
  using R = Ring<D>;
  bf16* ks = reinterpret_cast<bf16*>(smem);
  bf16* vs = ks + R::kStages * R::kTileElems;
  const int split = blockIdx.x, kv_head = blockIdx.y, row = blockIdx.z;
  const int kv_len = p.a.kv_lens[row];
  const int lower = p.a.sliding_window > 0 ? max(0, kv_len - p.a.sliding_window) : 0;
  int per = max(kMinKeysPerSplit, (kv_len - lower + p.num_splits - 1) / p.num_splits);
  per = (per + kTileKeys - 1) / kTileKeys * kTileKeys;
  const int key_begin = lower + split * per, key_end = min(kv_len, key_begin + per);
  const int num_tiles = key_begin < key_end ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  const int32_t* table = p.a.block_tables + row * p.a.max_blocks_per_row;
#pragma unroll
  for (int s = 0; s < R::kStages - 1; ++s) {
    if (s < num_tiles)
      load_tile<D>(p, table, kv_head, key_begin + s * kTileKeys, key_end, ks + s * R::kTileElems, vs + s * R::kTileElems);
    cp_async_commit();
  }
  uint32_t qa[D / 16][4];
  load_query<D>(p, row, kv_head, qa);
  Accum<D> acc;
  for (int t = 0; t < num_tiles; ++t) {
    cp_async_wait<R::kStages - 2>();
    __syncwarp();  // every lane's copies of tile t landed; tile t - 1's slot is free
    const int next = t + R::kStages - 1;
    if (next < num_tiles) {
      const int slot = next % R::kStages;
      load_tile<D>(p, table, kv_head, key_begin + next * kTileKeys, key_end, ks + slot * R::kTileElems,
                   vs + slot * R::kTileElems);
    }
    cp_async_commit();
    const int slot = t % R::kStages;
    float s[2][4];
    score_tile<D>(p, qa, ks + slot * R::kTileElems, key_begin + t * kTileKeys, key_end, s);
    softmax_pv<D>(s, vs + slot * R::kTileElems, acc);
    __syncwarp();  // all lanes are done reading the slot before it is refilled
  }
  cp_async_wait<0>();
  write_result<D>(p, acc, row, kv_head, split);
  if (p.num_splits > 1) arrive_and_merge<D>(p, row, kv_head);
}

// Zeroed once; every merge leaves its counter at zero again.
int* arrival_counters() {
  static int* counters = [] {
    int* c = nullptr;
    STRATA_CUDA_CHECK(cudaMalloc(&c, kMaxArrivalCounters * sizeof(int)));
    STRATA_CUDA_CHECK(cudaMemset(c, 0, kMaxArrivalCounters * sizeof(int)));
    return c;
  }();
  return counters;
}

// Enough warps for ~8 per SM; from the grid only, so a captured graph stays valid while
// kv lengths grow (each row then spreads its keys over at most this many splits).
int choose_splits(int64_t warps) {
  const int64_t target = 8 * static_cast<int64_t>(num_sms());
  return static_cast<int>(std::clamp<int64_t>((target + warps - 1) / warps, 1, kMaxSplits));
}

template <int D>
void launch(DecodeParams& p, cudaStream_t stream) {
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           Ring<D>::kBytes));
    return true;
  }();
  (void)configured;
  const dim3 grid(p.num_splits, p.a.num_kv_heads, p.a.num_rows);
  launch_dependent(decode_attention_kernel<D>, grid, dim3(32), Ring<D>::kBytes, stream, p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool decode_attention_supported(int head_dim, int group) {
  return (head_dim == 64 || head_dim == 128 || head_dim == 256) && group >= 1 && group <= kMaxGroup;
}

void decode_attention(const DecodeAttentionArgs& args, cudaStream_t stream) {
  DecodeParams p{.a = args, .partial_o = nullptr, .partial_ml = nullptr, .arrivals = nullptr,
                 .group = args.num_q_heads / args.num_kv_heads, .num_splits = 1};
  const int64_t pairs = static_cast<int64_t>(args.num_rows) * args.num_kv_heads;
  if (pairs <= kMaxArrivalCounters) p.num_splits = choose_splits(pairs);
  if (p.num_splits > 1) {
    p.arrivals = arrival_counters();
    static DeviceScratch scratch;  // grows only: captured graphs keep their pointers valid
    const int64_t rows = static_cast<int64_t>(p.num_splits) * args.num_rows * args.num_q_heads;
    auto* base = static_cast<float*>(scratch.get(rows * (args.head_dim + 2) * static_cast<int64_t>(sizeof(float))));
    p.partial_o = base;
    p.partial_ml = base + rows * args.head_dim;
  }
  switch (args.head_dim) {
    case 64: launch<64>(p, stream); break;
    case 128: launch<128>(p, stream); break;
    case 256: launch<256>(p, stream); break;
    default: STRATA_CHECK_MSG(false, "decode_attention: head_dim {}", args.head_dim);
  }
}

}  // namespace strata::cuda
