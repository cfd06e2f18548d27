// CUDA gated delta rule, chunked (WY / UT-transform) form for prefill rows, the math of
// cpu::gated_delta_rule_chunked in f32. Two launches: `prepare` runs every (chunk, value head)
// at once and writes the chunk's UT matrix T, its decayed causal q·k matrix P, the cumulative
// log decay gc and beta to scratch; `scan` carries the state across chunks, one block per
// (value head, 32 value columns), since every step below is separable over value columns.
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/chunk_tile.cuh"
#include "strata/ops/cuda/gated_delta_rule.cuh"
#include "strata/ops/gated_delta_rule.h"

namespace strata::cuda {
namespace {

constexpr int kChunk = kScanChunk;
constexpr int kThreads = kScanThreads;
constexpr int kTileV = kTileCols;  // value columns per scan block
static_assert(kChunk == ops::kGatedDeltaRuleChunkTokens, "the form picker counts this chunk");
constexpr int64_t kScratchFloats = 2 * kChunk * kChunk + 2 * kChunk;  // T, P, gc, beta
static_assert(kThreads == 4 * kChunk, "the solve gives each column of T four threads");
static_assert(kThreads == 16 * 16 && kChunk == 4 * 16, "prepare tiles the chunk 16x16 by 4x4");

// Rows [t0, t0 + len) of value head h's q and k into q_s, k_s [kChunk][ld] f32, l2-normalised
// as HF's l2norm, q also times scale and q_row_scale[i] when given; rows past len are zero.
// Called by the whole block; ends synced.
template <typename T, int DK>
__device__ void load_qk_chunk(const GdnParams& p, int64_t t0, int len, int64_t h, float* q_s,
                              float* k_s, int ld, const float* q_row_scale) {
  const int64_t kh = h / (p.nv / p.nk);
  for (int idx = threadIdx.x; idx < kChunk * DK; idx += blockDim.x) {
    const int i = idx / DK, d = idx % DK;
    float qv = 0.0f, kv = 0.0f;
    if (i < len) {
      const T* row = static_cast<const T*>(p.qkv) + (t0 + i) * p.stride;
      qv = to_f32(row[kh * DK + d]);
      kv = to_f32(row[p.nk * DK + kh * DK + d]);
    }
    q_s[i * ld + d] = qv;
    k_s[i * ld + d] = kv;
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = warp; i < kChunk; i += blockDim.x / 32) {
    float sq = 0.0f, sk = 0.0f;
    for (int d = lane; d < DK; d += 32) {
      sq += q_s[i * ld + d] * q_s[i * ld + d];
      sk += k_s[i * ld + d] * k_s[i * ld + d];
    }
    for (int o = 16; o > 0; o >>= 1) {
      sq += __shfl_xor_sync(0xffffffffu, sq, o);
      sk += __shfl_xor_sync(0xffffffffu, sk, o);
    }
    const float q_mul = (1.0f / sqrtf(sq + 1e-6f)) * p.scale * (q_row_scale ? q_row_scale[i] : 1.0f);
    const float k_mul = 1.0f / sqrtf(sk + 1e-6f);
    for (int d = lane; d < DK; d += 32) {
      q_s[i * ld + d] *= q_mul;
      k_s[i * ld + d] *= k_mul;
    }
  }
  __syncthreads();
}

// a_s = -beta_i (k_i·k_j) exp(gc_i - gc_j) for j < i (else 0); p_out = (q_i·k_j) exp(gc_i - gc_j)
// for j <= i (else 0). Thread (ti, tj) owns rows ti + 16a and columns tj + 16b.
template <int DK>
__device__ void chunk_products(const float* q_s, const float* k_s, const float* gc_s,
                               const float* beta_s, float* a_s, float* p_out) {
  constexpr int ld = DK + 1, lda = kChunk + 1;
  const int ti = threadIdx.x / 16, tj = threadIdx.x % 16;
  float kk[4][4] = {}, qk[4][4] = {};
  for (int d = 0; d < DK; ++d) {
    float qi[4], ki[4], kj[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      qi[a] = q_s[(ti + 16 * a) * ld + d];
      ki[a] = k_s[(ti + 16 * a) * ld + d];
      kj[a] = k_s[(tj + 16 * a) * ld + d];
    }
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        kk[a][b] += ki[a] * kj[b];
        qk[a][b] += qi[a] * kj[b];
      }
  }
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int i = ti + 16 * a, j = tj + 16 * b;
      const float decay = j <= i ? expf(gc_s[i] - gc_s[j]) : 0.0f;  // j > i could overflow
      a_s[i * lda + j] = j < i ? -((kk[a][b] * beta_s[i]) * decay) : 0.0f;
      p_out[i * kChunk + j] = j <= i ? qk[a][b] * decay : 0.0f;
    }
}

// Strictly lower part of T = (I - A)⁻¹ into t_s (zeroed by the caller) by forward
// substitution, row i = A_i + Σ_{j<m<i} A_im T_m; four threads per column, reduced by shuffles.
__device__ void solve_ut(const float* a_s, float* t_s) {
  constexpr int lda = kChunk + 1;
  const int j = threadIdx.x / 4, part = threadIdx.x % 4;
  for (int i = 1; i < kChunk; ++i) {
    float acc = 0.0f;
    if (j < i)
      for (int m = j + 1 + part; m < i; m += 4) acc += a_s[i * lda + m] * t_s[m * lda + j];
    acc += __shfl_xor_sync(0xffffffffu, acc, 1);
    acc += __shfl_xor_sync(0xffffffffu, acc, 2);
    if (j < i && part == 0) t_s[i * lda + j] = a_s[i * lda + j] + acc;
    __syncthreads();
  }
}

template <int DK>
constexpr size_t prepare_smem_bytes() {
  return (2 * kChunk * (DK + 1) + 2 * kChunk * (kChunk + 1) + 2 * kChunk) * sizeof(float);
}

// Grid (num_chunks, nv). Padding rows of a short last chunk get g = 0 and beta = 0, so they
// leave T, P and gc_last unchanged and the scan can always run over kChunk rows.
template <typename T, int DK>
__global__ void __launch_bounds__(kThreads) gdn_chunk_prepare_kernel(GdnParams p, float* scratch) {
  extern __shared__ float4 smem4[];
  float* q_s = reinterpret_cast<float*>(smem4);   // [kChunk][DK + 1]
  float* k_s = q_s + kChunk * (DK + 1);            // [kChunk][DK + 1]
  float* a_s = k_s + kChunk * (DK + 1);            // [kChunk][kChunk + 1]
  float* t_s = a_s + kChunk * (kChunk + 1);        // [kChunk][kChunk + 1]
  float* gc_s = t_s + kChunk * (kChunk + 1);       // [kChunk]
  float* beta_s = gc_s + kChunk;                   // [kChunk]
  const int64_t chunk = blockIdx.x, h = blockIdx.y, t0 = chunk * kChunk;
  const int len = scan_chunk_len(p.tokens, t0);
  float* out = scratch + (h * gridDim.x + chunk) * kScratchFloats;
  if (threadIdx.x < kChunk) {
    const int i = threadIdx.x;
    const float2 g_beta = i < len ? gdn_gate<T>(p, t0 + i, h) : make_float2(0.0f, 0.0f);
    gc_s[i] = g_beta.x;
    beta_s[i] = g_beta.y;
  }
  for (int idx = threadIdx.x; idx < kChunk * (kChunk + 1); idx += blockDim.x) t_s[idx] = 0.0f;
  __syncthreads();
  if (threadIdx.x == 0)
    for (int i = 1; i < kChunk; ++i) gc_s[i] += gc_s[i - 1];
  load_qk_chunk<T, DK>(p, t0, len, h, q_s, k_s, DK + 1, nullptr);  // its syncs publish gc_s
  chunk_products<DK>(q_s, k_s, gc_s, beta_s, a_s, out + kChunk * kChunk);
  __syncthreads();
  solve_ut(a_s, t_s);
  for (int idx = threadIdx.x; idx < kChunk * kChunk; idx += blockDim.x) {
    const int i = idx / kChunk, j = idx % kChunk;
    out[idx] = i == j ? 1.0f : t_s[i * (kChunk + 1) + j];
  }
  if (threadIdx.x < kChunk) {
    out[2 * kChunk * kChunk + threadIdx.x] = gc_s[threadIdx.x];
    out[2 * kChunk * kChunk + kChunk + threadIdx.x] = beta_s[threadIdx.x];
  }
}

// Shared memory of the scan block, in floats; rows of q, k, T and P are float4-aligned.
template <int DK>
struct ScanSmem {
  static constexpr int ldk = DK + 4, ldt = kChunk + 4;
  static constexpr int q = 0, k = q + kChunk * ldk, t = k + kChunk * ldk, pm = t + kChunk * ldt;
  static constexpr int s = pm + kChunk * ldt, y = s + DK * kTileV, vn = y + kChunk * kTileV;
  static constexpr int gc = vn + kChunk * kTileV, beta = gc + kChunk, eg = beta + kChunk;
  static constexpr int ed = eg + kChunk, total = ed + kChunk;
};

// One chunk's T, P, gc, beta from scratch and its raw v columns into shared memory; eg =
// exp(gc_i) and ed = exp(gc_last - gc_i). Ends synced.
template <typename T, int DK>
__device__ void scan_load(const GdnParams& p, const float* src, int64_t t0, int len, int64_t h,
                          int64_t c0, float* sm) {
  using L = ScanSmem<DK>;
  if (threadIdx.x < kChunk) {
    const int i = threadIdx.x;
    const float gc = src[2 * kChunk * kChunk + i], gc_last = src[2 * kChunk * kChunk + kChunk - 1];
    sm[L::gc + i] = gc;
    sm[L::beta + i] = src[2 * kChunk * kChunk + kChunk + i];
    sm[L::eg + i] = expf(gc);
    sm[L::ed + i] = expf(gc_last - gc);
  }
  for (int idx = threadIdx.x; idx < kChunk * kChunk; idx += blockDim.x) {
    const int i = idx / kChunk, j = idx % kChunk;
    sm[L::t + i * L::ldt + j] = src[idx];
    sm[L::pm + i * L::ldt + j] = src[kChunk * kChunk + idx];
  }
  const T* v = static_cast<const T*>(p.qkv) + 2 * p.nk * DK + h * p.dv + c0;
  for (int idx = threadIdx.x; idx < kChunk * kTileV; idx += blockDim.x) {
    const int i = idx / kTileV, c = idx % kTileV;
    sm[L::y + idx] = i < len ? to_f32(v[(t0 + i) * p.stride + c]) : 0.0f;
  }
  __syncthreads();
  load_qk_chunk<T, DK>(p, t0, len, h, sm + L::q, sm + L::k, L::ldk, sm + L::eg);
}

// Grid (dv / kTileV, nv): the state columns [c0, c0 + kTileV) of head h stay in shared memory
// across all chunks. Per chunk: y = beta (v - exp(gc) k S); v_new = T y;
// out = (q exp(gc)) S + P v_new; S = exp(gc_last) S + Σ_j k_j exp(gc_last - gc_j) ⊗ v_new_j.
template <typename T, int DK>
__global__ void __launch_bounds__(kThreads) gdn_chunk_scan_kernel(GdnParams p, const float* scratch,
                                                                  int64_t num_chunks) {
  using L = ScanSmem<DK>;
  constexpr int kRows = kRowsPerThread, kStateRows = DK / kRowGroups;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  const int64_t h = blockIdx.y, c0 = static_cast<int64_t>(blockIdx.x) * kTileV;
  const int col = threadIdx.x % kTileV, row0 = threadIdx.x / kTileV;
  float* state = p.state + h * DK * p.dv + c0;
  for (int idx = threadIdx.x; idx < DK * kTileV; idx += blockDim.x)
    sm[L::s + idx] = state[(idx / kTileV) * p.dv + idx % kTileV];
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    const int64_t t0 = chunk * kChunk;
    const int len = scan_chunk_len(p.tokens, t0);
    scan_load<T, DK>(p, scratch + (h * num_chunks + chunk) * kScratchFloats, t0, len, h, c0, sm);
    float qs[kRows] = {}, ks[kRows] = {};
    rows_times_column<DK>(sm + L::q, L::ldk, sm + L::s, row0, col, qs);
    rows_times_column<DK>(sm + L::k, L::ldk, sm + L::s, row0, col, ks);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int i = row0 + kRowGroups * r;
      float& y = sm[L::y + i * kTileV + col];
      y = sm[L::beta + i] * (y - sm[L::eg + i] * ks[r]);
    }
    __syncthreads();
    float vn[kRows] = {};
    rows_times_column<kChunk>(sm + L::t, L::ldt, sm + L::y, row0, col, vn);
#pragma unroll
    for (int r = 0; r < kRows; ++r) sm[L::vn + (row0 + kRowGroups * r) * kTileV + col] = vn[r];
    __syncthreads();
    rows_times_column<kChunk>(sm + L::pm, L::ldt, sm + L::vn, row0, col, qs);
    T* out = static_cast<T*>(p.out) + h * p.dv + c0 + col;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const int i = row0 + kRowGroups * r;
      if (i < len) out[(t0 + i) * p.nv * p.dv] = from_f32<T>(qs[r]);
    }
    const int d0 = row0 * kStateRows;
    float s[kStateRows];
    const float decay_last = sm[L::eg + kChunk - 1];
#pragma unroll
    for (int r = 0; r < kStateRows; ++r) s[r] = sm[L::s + (d0 + r) * kTileV + col] * decay_last;
    for (int j = 0; j < kChunk; ++j) {
      const float w = sm[L::vn + j * kTileV + col] * sm[L::ed + j];
#pragma unroll
      for (int r = 0; r < kStateRows; r += 4) {
        const float4 kv = *reinterpret_cast<const float4*>(sm + L::k + j * L::ldk + d0 + r);
        s[r] += kv.x * w, s[r + 1] += kv.y * w, s[r + 2] += kv.z * w, s[r + 3] += kv.w * w;
      }
    }
#pragma unroll
    for (int r = 0; r < kStateRows; ++r) sm[L::s + (d0 + r) * kTileV + col] = s[r];
    __syncthreads();  // the next chunk's loads overwrite what this one read
  }
  for (int idx = threadIdx.x; idx < DK * kTileV; idx += blockDim.x)
    state[(idx / kTileV) * p.dv + idx % kTileV] = sm[L::s + idx];
}

// [nv, num_chunks, kScratchFloats] f32 per launch pair. Launches on the stream run in order, so
// a later call's prepare never overwrites what an earlier scan is still reading.
float* chunk_scratch(int64_t floats) {
  return static_cast<float*>(scratch(ScratchUse::kGatedDeltaChunks, floats * static_cast<int64_t>(sizeof(float))));
}

template <typename T, int DK>
void launch_chunked(const GdnParams& p) {
  static_assert(DK % (4 * kRowGroups) == 0, "state rows per thread go by float4");
  const int64_t num_chunks = ceil_div(p.tokens, kChunk);
  float* buf = chunk_scratch(p.nv * num_chunks * kScratchFloats);
  const cudaStream_t stream = current_stream();
  constexpr size_t prepare_smem = prepare_smem_bytes<DK>();
  constexpr size_t scan_smem = ScanSmem<DK>::total * sizeof(float);
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(gdn_chunk_prepare_kernel<T, DK>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, prepare_smem));
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(gdn_chunk_scan_kernel<T, DK>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, scan_smem));
  const dim3 prepare_grid(static_cast<unsigned>(num_chunks), static_cast<unsigned>(p.nv));
  gdn_chunk_prepare_kernel<T, DK><<<prepare_grid, kThreads, prepare_smem, stream>>>(p, buf);
  STRATA_CUDA_CHECK_LAUNCH();
  const dim3 scan_grid(static_cast<unsigned>(p.dv / kTileV), static_cast<unsigned>(p.nv));
  gdn_chunk_scan_kernel<T, DK><<<scan_grid, kThreads, scan_smem, stream>>>(p, buf, num_chunks);
  STRATA_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_chunked_dk(const GdnParams& p) {
  switch (p.dk) {
    case 32: launch_chunked<T, 32>(p); break;
    case 64: launch_chunked<T, 64>(p); break;
    case 128: launch_chunked<T, 128>(p); break;
    default:
      throw Error("gated_delta_rule: key head dim " + std::to_string(p.dk) +
                  " has no chunked CUDA kernel (32, 64 or 128)");
  }
}

}  // namespace

void launch_gdn_chunked(const GdnParams& p, DType dtype) {
  STRATA_CHECK(p.intermediates == nullptr && p.dv % kTileV == 0 && p.tokens > 0);
  if (dtype == DType::kBF16) {
    launch_chunked_dk<__nv_bfloat16>(p);
  } else if (dtype == DType::kF32) {
    launch_chunked_dk<float>(p);
  } else {
    unsupported_dtype("gated_delta_rule", dtype);
  }
}

}  // namespace strata::cuda
