// Decode attention: one block of four warps per (row, KV head, key split), each warp a
// quarter of the split's keys. A warp's 16-row query tile holds the group's heads (rows past
// the group are zero); K/V tiles of 16 keys stream through the warp's own cp.async ring,
// scores and P·V run on mma.sync (bf16 fragments through ldmatrix, e4m3 ones widened in
// registers: decode_attention_fp8.cuh). The warps merge in shared memory; splits past the
// keys exit at once, and the last live split to finish merges the others.
#include <algorithm>
#include <type_traits>

#include "strata/ops/cuda/attention_tile.cuh"
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/decode_attention_fp8.cuh"
#include "strata/ops/cuda/decode_attention_merge.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/cuda/decode_attention.h"

namespace strata::cuda {
namespace {

using namespace decode_merge;  // the kernel and its merges share the params and constants

using bf16 = __nv_bfloat16;
constexpr int kTileKeys = 16;
constexpr int kSplitKeys = kWarps * kTileKeys;  // a split's keys are a multiple of this
constexpr int kMinSplitKeys = 64;  // fewest keys a live split takes (the lab's floor overrides)
constexpr int64_t kMaxArrivalCounters = int64_t{1} << 16;

// A warp's ring of bf16 K and V tiles (an e4m3 cache's ring is Fp8Ring).
template <int D>
struct Ring {
  static constexpr int kLd = D + 8;  // padded rows: ldmatrix row addresses hit distinct banks
  static constexpr int kStages = D >= 256 ? 2 : 3;
  static constexpr int kTileElems = kTileKeys * kLd;
  static constexpr int kSlotBytes = kTileElems * 2;  // one K or V tile
  static constexpr int kBytes = 2 * kStages * kSlotBytes;
};
template <int D, bool kFp8>
using RingOf = std::conditional_t<kFp8, Fp8Ring<D>, Ring<D>>;

template <int D, bool kFp8>
constexpr int kSmemBytes = std::max<int>(kWarps * RingOf<D, kFp8>::kBytes, sizeof(MergeSmem<D>));

// Where a row's keys are and how they split: [lower, kv_len) over `live` splits of `per` keys.
struct KeySplit {
  int lower, kv_len, per, live;
};

__device__ __forceinline__ KeySplit split_keys(const DecodeParams& p, int row) {
  KeySplit k;
  k.kv_len = p.a.kv_lens[row];
  k.lower = p.a.sliding_window > 0 ? max(0, k.kv_len - p.a.sliding_window) : 0;
  const int span = max(0, k.kv_len - k.lower);
  const int floor_keys = p.a.min_split_keys > 0 ? p.a.min_split_keys : kMinSplitKeys;
  k.per = max(floor_keys, (span + p.num_splits - 1) / p.num_splits);
  k.per = (k.per + kSplitKeys - 1) / kSplitKeys * kSplitKeys;
  k.live = max(1, (span + k.per - 1) / k.per);  // split 0 answers even an empty row
  return k;
}

// Keys [key0, key0 + 16) of K and V into a ring slot (bf16 rows padded to kLd elements, e4m3
// rows to kRow bytes); keys at or past key_end zero-filled. Lane c copies chunks c, c + 32, ...
template <int D, bool kFp8>
__device__ void load_tile(const DecodeParams& p, const int32_t* table, int kv_head, int key0, int key_end,
                          void* ks, void* vs) {
  constexpr int kChunk = kFp8 ? 16 : 8, kChunks = D / kChunk;
  constexpr int kRow = kFp8 ? Fp8Ring<D>::kRow : Ring<D>::kLd;  // in elements
  using Elem = std::conditional_t<kFp8, uint8_t, bf16>;
  const int lane = threadIdx.x % 32;
  for (int c = lane; c < kTileKeys * kChunks; c += 32) {
    const int i = c / kChunks, ch = c % kChunks, key = key0 + i;
    const bool valid = key < key_end;
    int64_t off = 0;
    if (valid) {
      const int64_t slot = static_cast<int64_t>(table[key / p.a.block_size]) * p.a.block_size + key % p.a.block_size;
      off = (slot * p.a.num_kv_heads + kv_head) * D + ch * kChunk;
    }
    cp_async_16(static_cast<Elem*>(ks) + i * kRow + ch * kChunk, static_cast<const Elem*>(p.a.k_cache) + off, valid);
    cp_async_16(static_cast<Elem*>(vs) + i * kRow + ch * kChunk, static_cast<const Elem*>(p.a.v_cache) + off, valid);
  }
}

template <int D>
__device__ void bf16_scores(const uint32_t (&qa)[D / 16][4], const bf16* ks, float (&s)[2][4]) {
  const int lane = threadIdx.x % 32;
  // ldmatrix matrix (lane / 8) covers keys (lane / 16) * 8.. and dims +8 when odd: b[0..1] are
  // the B fragment of keys 0-7, b[2..3] of keys 8-15.
  const bf16* row = ks + ((lane / 16) * 8 + lane % 8) * (D + 8) + ((lane / 8) % 2) * 8;
#pragma unroll
  for (int nt = 0; nt < 2; ++nt) s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    uint32_t b[4];
    ldmatrix_x4(b, row + kd * 16);
    mma_bf16_16816(s[0], qa[kd][0], qa[kd][1], qa[kd][2], qa[kd][3], b[0], b[1]);
    mma_bf16_16816(s[1], qa[kd][0], qa[kd][1], qa[kd][2], qa[kd][3], b[2], b[3]);
  }
}

// Raw scores of keys [key0, key0 + 16) scaled, soft-capped, and masked past key_end and the group.
__device__ void finish_scores(const DecodeParams& p, int key0, int key_end, float (&s)[2][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
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

// The running softmax over this tile's scores; P as the A fragment of the P·V mma.
template <int D>
__device__ void softmax_tile(float (&s)[2][4], Accum<D>& acc, uint32_t (&pa)[4]) {
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
  pa[0] = pack_bf16(s[0][0], s[0][1]), pa[1] = pack_bf16(s[0][2], s[0][3]);
  pa[2] = pack_bf16(s[1][0], s[1][1]), pa[3] = pack_bf16(s[1][2], s[1][3]);
}

template <int D>
__device__ void bf16_pv(const uint32_t (&pa)[4], const bf16* vs, float (&o)[D / 8][4]) {
  const int lane = threadIdx.x % 32;
  // Transposed ldmatrix: matrix (lane / 8) covers keys ((lane / 8) % 2) * 8.. and dims (lane / 16) * 8..
  const bf16* row = vs + (((lane / 8) % 2) * 8 + lane % 8) * (D + 8) + (lane / 16) * 8;
#pragma unroll
  for (int nd2 = 0; nd2 < D / 16; ++nd2) {
    uint32_t b[4];
    ldmatrix_x4_trans(b, row + nd2 * 16);
    mma_bf16_16816(o[2 * nd2], pa[0], pa[1], pa[2], pa[3], b[0], b[1]);
    mma_bf16_16816(o[2 * nd2 + 1], pa[0], pa[1], pa[2], pa[3], b[2], b[3]);
  }
}

// Query fragments of the group's heads (A operand, rows >= group zero), read once. With an
// e4m3 cache slice kd's dims are permuted as its key fragments are (decode_attention_fp8.cuh).
template <int D, bool kFp8>
__device__ void load_query(const DecodeParams& p, int row, int kv_head, uint32_t (&qa)[D / 16][4]) {
  const int lane = threadIdx.x % 32, g = lane / 4, qd = lane % 4;
  const bool lo = g < p.group, hi = g + 8 < p.group;
  constexpr int kSecond = kFp8 ? 2 : 8;  // where the slice's second pair of the lane's dims starts
  const bf16* q0 = p.a.q + (static_cast<int64_t>(row) * p.a.num_q_heads + kv_head * p.group + g) * D +
                   (kFp8 ? 4 : 2) * qd;
  const bf16* q1 = q0 + 8 * D;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd) {
    qa[kd][0] = lo ? load_pair(q0 + kd * 16) : 0u;
    qa[kd][1] = hi ? load_pair(q1 + kd * 16) : 0u;
    qa[kd][2] = lo ? load_pair(q0 + kd * 16 + kSecond) : 0u;
    qa[kd][3] = hi ? load_pair(q1 + kd * 16 + kSecond) : 0u;
  }
}

// One warp's keys [key_begin, key_end) through its ring: the running softmax of its rows.
template <int D, bool kFp8>
__device__ void attend_keys(const DecodeParams& p, int row, int kv_head, int key_begin, int key_end,
                            unsigned char* ring, Accum<D>& acc) {
  using R = RingOf<D, kFp8>;
  constexpr int kSlotBytes = R::kSlotBytes;
  unsigned char* ks = ring;
  unsigned char* vs = ring + R::kStages * kSlotBytes;
  const int num_tiles = key_begin < key_end ? (key_end - key_begin + kTileKeys - 1) / kTileKeys : 0;
  const int32_t* table = p.a.block_tables + row * p.a.max_blocks_per_row;
#pragma unroll
  for (int s = 0; s < R::kStages - 1; ++s) {
    if (s < num_tiles)
      load_tile<D, kFp8>(p, table, kv_head, key_begin + s * kTileKeys, key_end, ks + s * kSlotBytes,
                         vs + s * kSlotBytes);
    cp_async_commit();
  }
  uint32_t qa[D / 16][4];
  load_query<D, kFp8>(p, row, kv_head, qa);
  for (int t = 0; t < num_tiles; ++t) {
    cp_async_wait<R::kStages - 2>();
    __syncwarp();  // every lane's copies of tile t landed; tile t - 1's slot is free
    const int next = t + R::kStages - 1;
    if (next < num_tiles) {
      const int slot = next % R::kStages;
      load_tile<D, kFp8>(p, table, kv_head, key_begin + next * kTileKeys, key_end, ks + slot * kSlotBytes,
                         vs + slot * kSlotBytes);
    }
    cp_async_commit();
    const unsigned char* k_tile = ks + (t % R::kStages) * kSlotBytes;
    const unsigned char* v_tile = vs + (t % R::kStages) * kSlotBytes;
    float s[2][4];
    if constexpr (kFp8) {
      fp8_scores<D>(qa, k_tile, s);
    } else {
      bf16_scores<D>(qa, reinterpret_cast<const bf16*>(k_tile), s);
    }
    finish_scores(p, key_begin + t * kTileKeys, key_end, s);
    uint32_t pa[4];
    softmax_tile<D>(s, acc, pa);
    if constexpr (kFp8) {
      fp8_pv<D>(pa, v_tile, acc.o);
    } else {
      bf16_pv<D>(pa, reinterpret_cast<const bf16*>(v_tile), acc.o);
    }
    __syncwarp();  // all lanes are done reading the slot before it is refilled
  }
  cp_async_wait<0>();
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {  // each lane held a quarter of its rows' sums
    acc.l[rr] += __shfl_xor_sync(0xffffffffu, acc.l[rr], 1);
    acc.l[rr] += __shfl_xor_sync(0xffffffffu, acc.l[rr], 2);
  }
}

template <int D, bool kFp8>
__global__ void __launch_bounds__(kWarps * 32) decode_attention_kernel(DecodeParams p) {
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  extern __shared__ __align__(16) unsigned char smem[];
  const int split = blockIdx.x, kv_head = blockIdx.y, row = blockIdx.z, warp = threadIdx.x / 32;
  // kv_lens and the block tables are uploaded before the step's first kernel, so they are read
  // before the wait (overlapping the kernel ahead, which writes q and this token's K / V rows).
  const KeySplit keys = split_keys(p, row);
  if (split >= keys.live) return;  // no keys here, and not counted by the merge
  const int per_warp = keys.per / kWarps;
  const int warp_begin = keys.lower + split * keys.per + warp * per_warp;
  const int first_key = warp_begin + static_cast<int>(threadIdx.x % kTileKeys);
  if (first_key < keys.kv_len) prefetch_l2(p.a.block_tables + row * p.a.max_blocks_per_row + first_key / p.a.block_size);
  wait_for_previous_kernel();
  Accum<D> acc;
  attend_keys<D, kFp8>(p, row, kv_head, warp_begin, min(keys.kv_len, warp_begin + per_warp),
                       smem + warp * RingOf<D, kFp8>::kBytes, acc);
  auto& sm = *reinterpret_cast<MergeSmem<D>*>(smem);
  merge_warps<D>(p, acc, sm);
  if (keys.live == 1) {
    write_output<D, kFp8>(p, sm, row, kv_head);
    return;
  }
  write_partial<D, kFp8>(p, sm, row, kv_head, split);
  arrive_and_merge<D>(p, sm, row, kv_head, keys.live);
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

// Splits that fill one wave of resident blocks: a second, partial wave costs more than the
// split's shorter key run saves (H100, gpu_attention_bench, Llama-3.1-8B batch 8 at 4k: 320
// blocks 73 us, 256 blocks 55). From the grid only, so a captured graph stays valid while kv
// lengths grow (each row then spreads its keys over at most this many splits).
template <int D, bool kFp8>
int choose_splits(int64_t pairs) {
  static const int resident = [] {
    int per_sm = 0;
    STRATA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, decode_attention_kernel<D, kFp8>,
                                                                     kWarps * 32, kSmemBytes<D, kFp8>));
    return std::max(1, per_sm) * num_sms();
  }();
  return static_cast<int>(std::clamp<int64_t>(resident / pairs, 1, kMaxSplits));
}

template <int D, bool kFp8>
void launch_cache(DecodeParams& p, cudaStream_t stream) {
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(decode_attention_kernel<D, kFp8>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes<D, kFp8>));
    return true;
  }();
  (void)configured;
  const int64_t pairs = static_cast<int64_t>(p.a.num_rows) * p.a.num_kv_heads;
  if (pairs <= kMaxArrivalCounters)
    p.num_splits = p.a.num_splits > 0 ? std::min(p.a.num_splits, kMaxSplits) : choose_splits<D, kFp8>(pairs);
  if (p.num_splits > 1) {
    p.arrivals = arrival_counters();
    const int64_t rows = static_cast<int64_t>(p.num_splits) * p.a.num_rows * p.a.num_q_heads;
    auto* base = static_cast<float*>(
        scratch(ScratchUse::kDecodeAttentionPartials, rows * (D + 2) * static_cast<int64_t>(sizeof(float))));
    p.partial_o = base;
    p.partial_ml = base + rows * D;
  }
  const dim3 grid(p.num_splits, p.a.num_kv_heads, p.a.num_rows);
  launch_dependent(decode_attention_kernel<D, kFp8>, grid, dim3(kWarps * 32), kSmemBytes<D, kFp8>, stream, p);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <int D>
void launch(DecodeParams& p, cudaStream_t stream) {
  if (p.a.kv_fp8) return launch_cache<D, true>(p, stream);
  launch_cache<D, false>(p, stream);
}

}  // namespace

bool decode_attention_supported(int head_dim, int group) {
  return (head_dim == 64 || head_dim == 128 || head_dim == 256) && group >= 1 && group <= kMaxGroup;
}

void decode_attention(const DecodeAttentionArgs& args, cudaStream_t stream) {
  DecodeParams p{.a = args, .partial_o = nullptr, .partial_ml = nullptr, .arrivals = nullptr,
                 .group = args.num_q_heads / args.num_kv_heads, .num_splits = 1};
  switch (args.head_dim) {
    case 64: launch<64>(p, stream); break;
    case 128: launch<128>(p, stream); break;
    case 256: launch<256>(p, stream); break;
    default: STRATA_CHECK_MSG(false, "decode_attention: head_dim {}", args.head_dim);
  }
}

}  // namespace strata::cuda
