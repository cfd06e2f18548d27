// CUDA attention over the paged KV cache, flash-attention style on tensor cores.
// A block takes 64 "query rows" = (token, head) pairs of one row and one KV head, packed
// token-major over the head group, so K/V tiles are read once for all heads sharing them.
// Keys run in tiles of BN through a two-stage cp.async ring in shared memory (ldmatrix
// fragments) with an online softmax in registers.
// Steps of few query rows (decode) also split the key range over grid.z (flash-decoding)
// and a combine kernel merges the partial results; see choose_num_splits().
#include <algorithm>
#include <type_traits>

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/decode_attention.h"
#include "strata/ops/paged_attention.h"

namespace strata::cuda {
namespace {

bool is_kv_cache_dtype(DType dtype) { return dtype == DType::kBF16 || dtype == DType::kF8_E4M3; }

// 8 bf16 narrowed to e4m3 (nearest even, saturating to +-448, as the CPU's store does).
__device__ __forceinline__ uint2 bf16x8_to_e4m3x8(uint4 v) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  uint32_t out[2] = {0u, 0u};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint16_t bits = static_cast<uint16_t>(w[i / 2] >> (16 * (i % 2)));
    const float f = __uint_as_float(static_cast<uint32_t>(bits) << 16);
    out[i / 4] |= static_cast<uint32_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3)) << (8 * (i % 4));
  }
  return make_uint2(out[0], out[1]);
}

using bf16 = __nv_bfloat16;
constexpr int kBlockRows = 64;  // query rows per block: 4 warps x 16
constexpr int kThreads = 128;

struct AttnKernelParams {
  const bf16* q;               // [T, Hq, D]
  const void* k_cache;         // [num_blocks, block_size, Hkv, D] bf16, or e4m3 (kv_fp8)
  const void* v_cache;         // [num_blocks, block_size, Hkv, D]
  bf16* out;                   // [T, Hq, D]
  float* partial_o;            // [splits, T, Hq, D] when num_splits > 1
  float* partial_ml;           // [splits, T, Hq, 2] (max, sum) when num_splits > 1
  const int32_t* cu_seqlens;   // [R + 1]
  const int32_t* kv_lens;      // [R]
  const int32_t* block_tables; // [R, max_blocks_per_row]
  const void* sinks;           // [Hq] f32 or bf16, or null
  bool sinks_bf16, kv_fp8;
  int64_t max_blocks_per_row;
  int num_tokens, num_q_heads, num_kv_heads, group, block_size, num_splits;
  float scale, softcap;
  int sliding_window;
  bool causal;
};

__device__ __forceinline__ float sink_logit(const AttnKernelParams& p, int head) {
  if (p.sinks == nullptr) return -INFINITY;
  return p.sinks_bf16 ? __bfloat162float(static_cast<const bf16*>(p.sinks)[head])
                      : static_cast<const float*>(p.sinks)[head];
}

// Where one block's query rows sit: row r of the step, KV head h, entries [entry0, +64).
struct BlockSpan {
  int q_begin, q_len, kv_len, kv_head, entry0, num_entries;
};

// A query row owned by this thread (rows g and g + 8 of its warp's 16).
struct QueryRow {
  bool valid;
  int token, head, pos, lower;  // visible keys: lower <= key <= pos
};

__device__ QueryRow query_row(const AttnKernelParams& p, const BlockSpan& s, int r) {
  QueryRow q{};
  const int entry = s.entry0 + r;
  q.valid = entry < s.num_entries;
  const int tok = entry / p.group;
  q.token = s.q_begin + tok;
  q.head = s.kv_head * p.group + entry % p.group;
  const int own = s.kv_len - s.q_len + tok;  // the query's position
  const int window = p.sliding_window;
  q.pos = p.causal ? own : window > 0 ? min(s.kv_len - 1, own + window - 1) : s.kv_len - 1;  // the last visible key
  q.lower = window > 0 ? own - window + 1 : 0;
  return q;
}

template <int D>
__device__ void load_q_tile(const AttnKernelParams& p, const BlockSpan& s, bf16* qs) {
  constexpr int kChunks = D / 8, kLd = D + 8;
  for (int c = threadIdx.x; c < kBlockRows * kChunks; c += kThreads) {
    const int e = c / kChunks, ch = c % kChunks;
    const int entry = s.entry0 + e;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (entry < s.num_entries) {
      const int tok = entry / p.group, head = s.kv_head * p.group + entry % p.group;
      v = *reinterpret_cast<const uint4*>(p.q + (static_cast<int64_t>(s.q_begin + tok) * p.num_q_heads + head) * D + ch * 8);
    }
    *reinterpret_cast<uint4*>(qs + e * kLd + ch * 8) = v;
  }
}

// Starts copying keys [key0, key0 + BN) of the row into shared memory (cp.async): bf16 rows
// padded to D + 8, or e4m3 codes unpadded; keys at or past kv_end are zero-filled, so masked
// probabilities never multiply stale cache contents. Thread c copies chunks c, c + 128, ...
template <int D, int BN, bool kFp8>
__device__ void load_kv_tile(const AttnKernelParams& p, const int32_t* table, int kv_head, int key0,
                             int kv_end, void* ks, void* vs) {
  constexpr int kChunk = kFp8 ? 16 : 8, kChunks = D / kChunk, kRow = kFp8 ? D : D + 8;
  using Elem = std::conditional_t<kFp8, uint8_t, bf16>;
  for (int c = threadIdx.x; c < BN * kChunks; c += kThreads) {
    const int i = c / kChunks, ch = c % kChunks;
    const int key = key0 + i;
    const bool valid = key < kv_end;
    int64_t off = 0;
    if (valid) {
      const int64_t slot = static_cast<int64_t>(table[key / p.block_size]) * p.block_size + key % p.block_size;
      off = (slot * p.num_kv_heads + kv_head) * D + ch * kChunk;
    }
    cp_async_16(static_cast<Elem*>(ks) + i * kRow + ch * kChunk, static_cast<const Elem*>(p.k_cache) + off, valid);
    cp_async_16(static_cast<Elem*>(vs) + i * kRow + ch * kChunk, static_cast<const Elem*>(p.v_cache) + off, valid);
  }
}

// The chunks this thread copied into an e4m3 stage, widened into the bf16 K and V tiles.
template <int D, int BN>
__device__ void widen_kv_tile(const uint8_t* ks, const uint8_t* vs, bf16* kt, bf16* vt) {
  constexpr int kChunks = D / 16;
  for (int c = threadIdx.x; c < BN * kChunks; c += kThreads) {
    const int i = c / kChunks, ch = c % kChunks;
    widen_e4m3x16(ks + i * D + ch * 16, kt + i * (D + 8) + ch * 16);
    widen_e4m3x16(vs + i * D + ch * 16, vt + i * (D + 8) + ch * 16);
  }
}

// Shared memory of the attention kernel: the Q tile, two stages of K and V (bf16, or e4m3
// codes then one widened bf16 K and V tile).
template <int D, int BN, bool kFp8>
struct AttnSmem {
  static constexpr int kQBytes = kBlockRows * (D + 8) * 2;
  static constexpr int kStageBytes = kFp8 ? BN * D : BN * (D + 8) * 2;  // one of K or V
  static constexpr int kTileBytes = BN * (D + 8) * 2;
  static constexpr int kBytes = kQBytes + 4 * kStageBytes + (kFp8 ? 2 * kTileBytes : 0);
};

// S = Q K^T for this warp's 16 rows and the tile's BN keys, scaled, capped and masked.
template <int D, int BN>
__device__ void tile_scores(const AttnKernelParams& p, const bf16* qs, const bf16* ks, int key0,
                            const QueryRow (&rows)[2], float (&s)[BN / 8][4]) {
  constexpr int kLd = D + 8;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, qd = lane % 4;
  const bf16* q0 = qs + (warp * 16 + g) * kLd + 2 * qd;
  const bf16* q1 = q0 + 8 * kLd;
  // ldmatrix matrix (lane / 8) covers keys (lane / 16) * 8.. of a 16-key pair of n-tiles and
  // dims +8 when odd: b[0..1] are the B fragment of the first n-tile, b[2..3] of the second.
  const bf16* krow = ks + ((lane / 16) * 8 + lane % 8) * kLd + ((lane / 8) % 2) * 8;
#pragma unroll
  for (int nt = 0; nt < BN / 8; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    const uint32_t a0 = load_pair(q0 + kd * 16), a1 = load_pair(q1 + kd * 16);
    const uint32_t a2 = load_pair(q0 + kd * 16 + 8), a3 = load_pair(q1 + kd * 16 + 8);
#pragma unroll
    for (int nt2 = 0; nt2 < BN / 16; ++nt2) {
      uint32_t b[4];
      ldmatrix_x4(b, krow + nt2 * 16 * kLd + kd * 16);
      mma_bf16_16816(s[2 * nt2], a0, a1, a2, a3, b[0], b[1]);
      mma_bf16_16816(s[2 * nt2 + 1], a0, a1, a2, a3, b[2], b[3]);
    }
  }
#pragma unroll
  for (int nt = 0; nt < BN / 8; ++nt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const QueryRow& row = rows[i / 2];
      const int key = key0 + nt * 8 + 2 * qd + (i & 1);
      float v = s[nt][i] * p.scale;
      if (p.softcap > 0.0f) v = p.softcap * tanhf(v / p.softcap);
      const bool visible = row.valid && key <= row.pos && key >= row.lower;
      s[nt][i] = visible ? v : -INFINITY;
    }
  }
}

// Online softmax: new running max per row, rescale O and the partial sums, S -> P.
template <int D, int BN>
__device__ void softmax_update(float (&s)[BN / 8][4], float (&o)[D / 8][4], float (&m)[2], float (&l)[2]) {
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    float mx = -INFINITY;
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) mx = fmaxf(mx, fmaxf(s[nt][2 * rr], s[nt][2 * rr + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float m_new = fmaxf(m[rr], mx);
    const float m_use = m_new == -INFINITY ? 0.0f : m_new;
    const float alpha = __expf(m[rr] - m_use);
    m[rr] = m_new;
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < BN / 8; ++nt) {
      s[nt][2 * rr] = __expf(s[nt][2 * rr] - m_use);
      s[nt][2 * rr + 1] = __expf(s[nt][2 * rr + 1] - m_use);
      sum += s[nt][2 * rr] + s[nt][2 * rr + 1];
    }
    l[rr] = l[rr] * alpha + sum;
#pragma unroll
    for (int nd = 0; nd < D / 8; ++nd) {
      o[nd][2 * rr] *= alpha;
      o[nd][2 * rr + 1] *= alpha;
    }
  }
}

// O += P V: P (C layout of two key octets) is exactly the A fragment of a k16 step; V's B
// fragments come from transposed ldmatrix (matrix lane / 8: keys +8 when odd, dims +8 from 16).
template <int D, int BN>
__device__ void accumulate_pv(const float (&s)[BN / 8][4], const bf16* vs, float (&o)[D / 8][4]) {
  constexpr int kLd = D + 8;
  const int lane = threadIdx.x % 32;
  const bf16* vrow = vs + (((lane / 8) % 2) * 8 + lane % 8) * kLd + (lane / 16) * 8;
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
    const uint32_t a0 = pack_bf16(s[2 * kk][0], s[2 * kk][1]);
    const uint32_t a1 = pack_bf16(s[2 * kk][2], s[2 * kk][3]);
    const uint32_t a2 = pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    const uint32_t a3 = pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3]);
#pragma unroll
    for (int nd2 = 0; nd2 < D / 16; ++nd2) {
      uint32_t b[4];
      ldmatrix_x4_trans(b, vrow + kk * 16 * kLd + nd2 * 16);
      mma_bf16_16816(o[2 * nd2], a0, a1, a2, a3, b[0], b[1]);
      mma_bf16_16816(o[2 * nd2 + 1], a0, a1, a2, a3, b[2], b[3]);
    }
  }
}

template <int D>
__device__ void write_rows(const AttnKernelParams& p, const QueryRow (&rows)[2], const float (&o)[D / 8][4],
                           const float (&m)[2], const float (&l)[2], int split) {
  const int qd = threadIdx.x % 4;
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const QueryRow& row = rows[rr];
    if (!row.valid) continue;
    const int64_t base = static_cast<int64_t>(row.token) * p.num_q_heads + row.head;
    if (p.num_splits == 1) {
      const float sink = sink_logit(p, row.head);
      const float mf = fmaxf(m[rr], sink);
      const float factor = __expf(m[rr] - mf);
      const float denom = l[rr] * factor + (p.sinks != nullptr ? __expf(sink - mf) : 0.0f);
      const float inv = factor / denom;
      bf16* dst = p.out + base * D + 2 * qd;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd)
        *reinterpret_cast<uint32_t*>(dst + nd * 8) = pack_bf16(o[nd][2 * rr] * inv, o[nd][2 * rr + 1] * inv);
    } else {
      const int64_t pbase = static_cast<int64_t>(split) * p.num_tokens * p.num_q_heads + base;
      float* dst = p.partial_o + pbase * D + 2 * qd;
#pragma unroll
      for (int nd = 0; nd < D / 8; ++nd)
        *reinterpret_cast<float2*>(dst + nd * 8) = make_float2(o[nd][2 * rr], o[nd][2 * rr + 1]);
      if (qd == 0) *reinterpret_cast<float2*>(p.partial_ml + pbase * 2) = make_float2(m[rr], l[rr]);
    }
  }
}

template <int D, int BN, bool kFp8>
__global__ void __launch_bounds__(kThreads) attention_kernel(AttnKernelParams p) {
  using S = AttnSmem<D, BN, kFp8>;
  extern __shared__ __align__(16) unsigned char smem[];
  bf16* qs = reinterpret_cast<bf16*>(smem);
  unsigned char* ks = smem + S::kQBytes;  // [2] stages
  unsigned char* vs = ks + 2 * S::kStageBytes;
  bf16* kt = reinterpret_cast<bf16*>(vs + 2 * S::kStageBytes);  // e4m3: the widened tiles
  bf16* vt = kt + BN * (D + 8);
  const int r = blockIdx.y, split = blockIdx.z % p.num_splits;
  BlockSpan span{.q_begin = p.cu_seqlens[r], .q_len = p.cu_seqlens[r + 1] - p.cu_seqlens[r],
                 .kv_len = p.kv_lens[r], .kv_head = static_cast<int>(blockIdx.z) / p.num_splits,
                 .entry0 = static_cast<int>(blockIdx.x) * kBlockRows, .num_entries = 0};
  span.num_entries = span.q_len * p.group;
  if (span.entry0 >= span.num_entries) return;
  const int tok_lo = span.entry0 / p.group;
  const int tok_hi = min(span.q_len - 1, (span.entry0 + kBlockRows - 1) / p.group);
  const int pos_lo = span.kv_len - span.q_len + tok_lo;
  const int pos_hi = span.kv_len - span.q_len + tok_hi;
  const int kv_end = p.causal                ? pos_hi + 1
                     : p.sliding_window > 0 ? min(span.kv_len, pos_hi + p.sliding_window)
                                            : span.kv_len;
  const int kv_begin = p.sliding_window > 0 ? max(0, pos_lo - p.sliding_window + 1) : 0;
  const int tile0 = kv_begin / BN, num_tiles = (kv_end + BN - 1) / BN - tile0;
  const int per_split = (num_tiles + p.num_splits - 1) / p.num_splits;
  const int first = tile0 + split * per_split, last = min(tile0 + num_tiles, first + per_split);
  const int32_t* table = p.block_tables + r * p.max_blocks_per_row;
  const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) / 4;
  const QueryRow rows[2] = {query_row(p, span, warp * 16 + g), query_row(p, span, warp * 16 + g + 8)};
  const bool warp_active = span.entry0 + warp * 16 < span.num_entries;
  if (first < last) load_kv_tile<D, BN, kFp8>(p, table, span.kv_head, first * BN, kv_end, ks, vs);
  cp_async_commit();
  load_q_tile<D>(p, span, qs);
  float o[D / 8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  for (int tile = first; tile < last; ++tile) {
    const int stage = (tile - first) & 1;
    __syncthreads();  // the other stage's tile is consumed (and the Q tile is stored)
    if (tile + 1 < last)
      load_kv_tile<D, BN, kFp8>(p, table, span.kv_head, (tile + 1) * BN, kv_end, ks + (stage ^ 1) * S::kStageBytes,
                                vs + (stage ^ 1) * S::kStageBytes);
    cp_async_commit();
    cp_async_wait<1>();  // this tile's copies landed (the next tile's may still run)
    const bf16* k_tile = reinterpret_cast<const bf16*>(ks + stage * S::kStageBytes);
    const bf16* v_tile = reinterpret_cast<const bf16*>(vs + stage * S::kStageBytes);
    if constexpr (kFp8) {
      widen_kv_tile<D, BN>(ks + stage * S::kStageBytes, vs + stage * S::kStageBytes, kt, vt);
      k_tile = kt, v_tile = vt;
    }
    __syncthreads();
    if (!warp_active) continue;
    float s[BN / 8][4];
    tile_scores<D, BN>(p, qs, k_tile, tile * BN, rows, s);
    softmax_update<D, BN>(s, o, m, l);
    accumulate_pv<D, BN>(s, v_tile, o);
  }
  cp_async_wait<0>();
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    l[rr] += __shfl_xor_sync(0xffffffffu, l[rr], 1);
    l[rr] += __shfl_xor_sync(0xffffffffu, l[rr], 2);
  }
  write_rows<D>(p, rows, o, m, l, split);
}

// Merges the splits of each (token, head): out = sum_s e^(m_s - M) O_s / sum_s e^(m_s - M) l_s,
// with the sink's e^(sink - M) in the denominator.
__global__ void combine_kernel(AttnKernelParams p, int head_dim) {
  const int64_t base = static_cast<int64_t>(blockIdx.x) * p.num_q_heads + blockIdx.y;
  const int64_t split_stride = static_cast<int64_t>(p.num_tokens) * p.num_q_heads;
  const float sink = sink_logit(p, blockIdx.y);
  float mx = sink;
  for (int s = 0; s < p.num_splits; ++s) mx = fmaxf(mx, p.partial_ml[(s * split_stride + base) * 2]);
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float denom = p.sinks != nullptr ? __expf(sink - mx) : 0.0f, acc = 0.0f;
    for (int s = 0; s < p.num_splits; ++s) {
      const int64_t ps = s * split_stride + base;
      const float ms = p.partial_ml[ps * 2];
      if (ms == -INFINITY) continue;
      const float w = __expf(ms - mx);
      denom += w * p.partial_ml[ps * 2 + 1];
      acc += w * p.partial_o[ps * head_dim + d];
    }
    p.out[base * head_dim + d] = __float2bfloat16_rn(acc / denom);
  }
}

// Partial results of split launches (see ScratchPool for why it only grows).
float* split_scratch(int64_t floats) {
  return static_cast<float*>(scratch(ScratchUse::kPagedAttentionPartials, floats * static_cast<int64_t>(sizeof(float))));
}

// Splits of the key range: enough blocks for two waves on the chip. It depends on the
// grid only (not on the kv lengths), so a captured decode graph stays valid as they grow.
int choose_num_splits(int64_t grid_blocks) {
  const int64_t target = 2 * static_cast<int64_t>(num_sms());
  if (grid_blocks >= target) return 1;
  return static_cast<int>(std::min<int64_t>(16, (target + grid_blocks - 1) / grid_blocks));
}

template <int D, int BN, bool kFp8>
void launch_attention_cache(const AttnKernelParams& p, dim3 grid) {
  constexpr int kSmemBytes = AttnSmem<D, BN, kFp8>::kBytes;
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(attention_kernel<D, BN, kFp8>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  const cudaStream_t stream = current_stream();
  attention_kernel<D, BN, kFp8><<<grid, kThreads, kSmemBytes, stream>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
  if (p.num_splits > 1) {
    combine_kernel<<<dim3(p.num_tokens, p.num_q_heads), std::min(D, 256), 0, stream>>>(p, D);
    STRATA_CUDA_CHECK_LAUNCH();
  }
}

template <int D, int BN>
void launch_attention(const AttnKernelParams& p, dim3 grid) {
  if (p.kv_fp8) return launch_attention_cache<D, BN, true>(p, grid);
  launch_attention_cache<D, BN, false>(p, grid);
}

// One block per token; k and v rows copied as 16-byte chunks (bf16 caches) or narrowed to e4m3
// 8 values at a time. Slots outside the cache (padding tokens carry -1) are skipped.
template <typename Cache>
__global__ void store_kv_kernel(const bf16* k, const bf16* v, const int32_t* slots, Cache* k_cache,
                                Cache* v_cache, int64_t token_elems, int64_t num_slots) {
  const int64_t t = blockIdx.x;
  const int64_t slot = slots[t];
  if (slot < 0 || slot >= num_slots) return;
  const int64_t chunks = token_elems / 8;
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    const uint4 kc = reinterpret_cast<const uint4*>(k + t * token_elems)[c];
    const uint4 vc = reinterpret_cast<const uint4*>(v + t * token_elems)[c];
    if constexpr (std::is_same_v<Cache, uint8_t>) {
      reinterpret_cast<uint2*>(k_cache + slot * token_elems)[c] = bf16x8_to_e4m3x8(kc);
      reinterpret_cast<uint2*>(v_cache + slot * token_elems)[c] = bf16x8_to_e4m3x8(vc);
    } else {
      reinterpret_cast<uint4*>(k_cache + slot * token_elems)[c] = kc;
      reinterpret_cast<uint4*>(v_cache + slot * token_elems)[c] = vc;
    }
  }
}

AttnKernelParams make_params(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                             const ops::AttentionMetadata& meta, const ops::AttentionParams& params,
                             const Tensor& out) {
  return AttnKernelParams{
      .q = q.data_as<bf16>(), .k_cache = k_cache.data(), .v_cache = v_cache.data(),
      .out = out.data_as<bf16>(), .partial_o = nullptr, .partial_ml = nullptr,
      .cu_seqlens = meta.cu_seqlens.data_as<int32_t>(), .kv_lens = meta.kv_lens.data_as<int32_t>(),
      .block_tables = meta.block_tables.data_as<int32_t>(),
      .sinks = params.sinks.defined() ? params.sinks.data() : nullptr,
      .sinks_bf16 = params.sinks.defined() && params.sinks.dtype() == DType::kBF16,
      .kv_fp8 = k_cache.dtype() == DType::kF8_E4M3,
      .max_blocks_per_row = meta.block_tables.dim(1), .num_tokens = static_cast<int>(q.dim(0)),
      .num_q_heads = static_cast<int>(q.dim(1)), .num_kv_heads = static_cast<int>(k_cache.dim(2)),
      .group = static_cast<int>(q.dim(1) / k_cache.dim(2)), .block_size = static_cast<int>(k_cache.dim(1)),
      .num_splits = 1, .scale = params.scale, .softcap = params.logit_softcap,
      .sliding_window = static_cast<int>(params.sliding_window), .causal = params.causal};
}

}  // namespace

void store_kv(const Tensor& k, const Tensor& v, const Tensor& slot_mapping, const Tensor& k_cache,
              const Tensor& v_cache) {
  const int64_t num_tokens = k.dim(0);
  if (num_tokens == 0) return;
  if (k.dtype() != DType::kBF16 || v.dtype() != DType::kBF16 || !is_kv_cache_dtype(k_cache.dtype()) ||
      v_cache.dtype() != k_cache.dtype())
    unsupported_dtype("store_kv (bf16 k and v, bf16 or e4m3 caches)", k_cache.dtype());
  const int64_t token_elems = k.dim(1) * k.dim(2);
  STRATA_CHECK(token_elems % 8 == 0);
  const int64_t num_slots = k_cache.dim(0) * k_cache.dim(1);
  const int32_t* slots = slot_mapping.data_as<int32_t>();
  if (k_cache.dtype() == DType::kF8_E4M3)
    store_kv_kernel<<<num_tokens, 128, 0, current_stream()>>>(k.data_as<bf16>(), v.data_as<bf16>(), slots,
                                                              k_cache.data_as<uint8_t>(), v_cache.data_as<uint8_t>(),
                                                              token_elems, num_slots);
  else
    store_kv_kernel<<<num_tokens, 128, 0, current_stream()>>>(k.data_as<bf16>(), v.data_as<bf16>(), slots,
                                                              k_cache.data_as<bf16>(), v_cache.data_as<bf16>(),
                                                              token_elems, num_slots);
  STRATA_CUDA_CHECK_LAUNCH();
}

void paged_attention(const Tensor& q, const Tensor& k_cache, const Tensor& v_cache,
                     const ops::AttentionMetadata& meta, const ops::AttentionParams& params,
                     const Tensor& out) {
  if (q.dim(0) == 0 || meta.num_rows == 0) return;
  if (q.dtype() != DType::kBF16 || out.dtype() != DType::kBF16 || !is_kv_cache_dtype(k_cache.dtype()) ||
      v_cache.dtype() != k_cache.dtype())
    unsupported_dtype("paged_attention (bf16 q and out, bf16 or e4m3 caches)", k_cache.dtype());
  if (params.sinks.defined() && params.sinks.dtype() != DType::kF32 && params.sinks.dtype() != DType::kBF16)
    unsupported_dtype("paged_attention sinks", params.sinks.dtype());
  AttnKernelParams p = make_params(q, k_cache, v_cache, meta, params, out);
  if (meta.max_q_len == 1 && q.dim(0) == meta.num_rows && decode_attention_supported(q.dim(2), p.group)) {
    decode_attention({.q = p.q, .k_cache = p.k_cache, .v_cache = p.v_cache, .out = p.out, .kv_lens = p.kv_lens,
                      .block_tables = p.block_tables, .sinks = p.sinks, .sinks_bf16 = p.sinks_bf16, .kv_fp8 = p.kv_fp8,
                      .max_blocks_per_row = p.max_blocks_per_row, .num_rows = static_cast<int>(meta.num_rows),
                      .num_q_heads = p.num_q_heads, .num_kv_heads = p.num_kv_heads, .block_size = p.block_size,
                      .head_dim = static_cast<int>(q.dim(2)), .scale = p.scale, .softcap = p.softcap,
                      .sliding_window = p.sliding_window},
                     current_stream());
    return;
  }
  const int64_t entry_tiles = ceil_div(meta.max_q_len * p.group, kBlockRows);
  const int64_t blocks = entry_tiles * meta.num_rows * p.num_kv_heads;
  p.num_splits = choose_num_splits(blocks);
  if (p.num_splits > 1) {
    const int64_t rows = static_cast<int64_t>(p.num_splits) * p.num_tokens * p.num_q_heads;
    float* scratch = split_scratch(rows * (q.dim(2) + 2));
    p.partial_o = scratch;
    p.partial_ml = scratch + rows * q.dim(2);
  }
  const dim3 grid(static_cast<unsigned>(entry_tiles), static_cast<unsigned>(meta.num_rows),
                  static_cast<unsigned>(p.num_kv_heads * p.num_splits));
  switch (q.dim(2)) {
    case 32: launch_attention<32, 64>(p, grid); break;
    case 48: launch_attention<48, 64>(p, grid); break;     // MLA: nope 32 + rope 16 (small models)
    case 64: launch_attention<64, 64>(p, grid); break;
    case 96: launch_attention<96, 64>(p, grid); break;
    case 128: launch_attention<128, 64>(p, grid); break;
    case 192: launch_attention<192, 32>(p, grid); break;   // MLA: DeepSeek-V3's 128 + 64
    case 256: launch_attention<256, 32>(p, grid); break;
    default:  // refused at model build (ops::check_paged_attention_supported)
      throw Error("paged_attention: head_dim " + std::to_string(q.dim(2)) +
                  " is not supported on CUDA (32, 48, 64, 96, 128, 192 or 256)");
  }
}

}  // namespace strata::cuda
