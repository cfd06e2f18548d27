// CUDA Mamba-2 SSD scan, chunked form for prefill rows: the math of cpu::ssd_scan_chunked in f32,
// in chunks of kScanChunk tokens. One block per (head, 32 rows of head_dim) keeps its state slice
// [32, N] in shared memory across chunks and forms each chunk's decayed causal C·Bᵀ matrix itself:
// every step is separable over head_dim rows, so blocks never exchange anything.
#include "strata/ops/cuda/chunk_tile.cuh"
#include "strata/ops/cuda/ssd_scan.cuh"
#include "strata/ops/ssd_scan.h"

namespace strata::cuda {
namespace {

constexpr int kChunk = kScanChunk;
static_assert(kChunk == ops::kSsdScanChunkTokens, "the form picker counts this chunk");
static_assert(kScanThreads == 16 * 16 && kChunk == 4 * 16, "C·Bᵀ is tiled 16x16 by 4x4");

// Shared memory of one block, in floats; rows of C, B and P are float4-aligned.
template <int N>
struct SsdSmem {
  static constexpr int ldn = N + 4, ldp = kChunk + 4;
  static constexpr int c = 0, b = c + kChunk * ldn, pm = b + kChunk * ldn;  // [kChunk][ld*]
  static constexpr int s = pm + kChunk * ldp;         // [N][kTileCols]: the state slice, transposed
  static constexpr int x = s + N * kTileCols;         // [kChunk][kTileCols]: x
  static constexpr int xb = x + kChunk * kTileCols;   // [kChunk][kTileCols]: x * dt
  static constexpr int acs = xb + kChunk * kTileCols;  // [kChunk]: cumulative A * dt
  static constexpr int dt = acs + kChunk, eg = dt + kChunk, ed = eg + kChunk, total = ed + kChunk;
};

// One chunk's B and C rows (the head's group), x columns [c0, c0 + kTileCols), dt, acs,
// xb = x * dt, eg = exp(acs_i) and ed = exp(acs_last - acs_i). Padding rows past len get dt = 0
// and zero B, C, x, so they change nothing. Ends synced except eg and ed (written last).
template <typename T, int N>
__device__ void ssd_load(const SsdParams& p, int64_t t0, int len, int64_t h, int64_t c0, float* sm) {
  using L = SsdSmem<N>;
  const int64_t grp = h / (p.nh / p.groups);
  const int64_t b_off = p.nh * p.hd + grp * N, c_off = p.nh * p.hd + (p.groups + grp) * N;
  const T* xbc = static_cast<const T*>(p.xbc);
  for (int idx = threadIdx.x; idx < kChunk * N; idx += blockDim.x) {
    const int i = idx / N, n = idx % N;
    const int64_t row = (t0 + i) * p.stride;
    sm[L::b + i * L::ldn + n] = i < len ? to_f32(xbc[row + b_off + n]) : 0.0f;
    sm[L::c + i * L::ldn + n] = i < len ? to_f32(xbc[row + c_off + n]) : 0.0f;
  }
  for (int idx = threadIdx.x; idx < kChunk * kTileCols; idx += blockDim.x) {
    const int i = idx / kTileCols, col = idx % kTileCols;
    sm[L::x + idx] = i < len ? to_f32(xbc[(t0 + i) * p.stride + h * p.hd + c0 + col]) : 0.0f;
  }
  if (threadIdx.x < kChunk) {
    const int i = threadIdx.x;
    const float dt = i < len ? ssd_time_step<T>(p, t0 + i, h) : 0.0f;
    sm[L::dt + i] = dt;
    sm[L::acs + i] = -expf(p.A_log[h]) * dt;
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int i = 1; i < kChunk; ++i) sm[L::acs + i] += sm[L::acs + i - 1];
  for (int idx = threadIdx.x; idx < kChunk * kTileCols; idx += blockDim.x)
    sm[L::xb + idx] = sm[L::x + idx] * sm[L::dt + idx / kTileCols];
  __syncthreads();
  if (threadIdx.x < kChunk) {
    const int i = threadIdx.x;
    sm[L::eg + i] = expf(sm[L::acs + i]);
    sm[L::ed + i] = expf(sm[L::acs + kChunk - 1] - sm[L::acs + i]);
  }
}

// P = (C_i·B_j) exp(acs_i - acs_j) for j <= i, else 0. Thread (ti, tj) owns rows ti + 16a and
// columns tj + 16b.
template <int N>
__device__ void ssd_products(float* sm) {
  using L = SsdSmem<N>;
  const int ti = threadIdx.x / 16, tj = threadIdx.x % 16;
  float cb[4][4] = {};
  for (int n = 0; n < N; ++n) {
    float ci[4], bj[4];
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      ci[a] = sm[L::c + (ti + 16 * a) * L::ldn + n];
      bj[a] = sm[L::b + (tj + 16 * a) * L::ldn + n];
    }
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
      for (int b = 0; b < 4; ++b) cb[a][b] += ci[a] * bj[b];
  }
#pragma unroll
  for (int a = 0; a < 4; ++a)
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const int i = ti + 16 * a, j = tj + 16 * b;  // j > i: exp could overflow, so not taken
      sm[L::pm + i * L::ldp + j] = j <= i ? cb[a][b] * expf(sm[L::acs + i] - sm[L::acs + j]) : 0.0f;
    }
}

// S[c, :] = exp(acs_last) S[c, :] + Σ_j exp(acs_last - acs_j) xb[j, c] B_j, for this thread's
// column c and state entries [d0, d0 + N / kRowGroups).
template <int N>
__device__ void ssd_state_update(float* sm, int row0, int col) {
  using L = SsdSmem<N>;
  constexpr int kStateRows = N / kRowGroups;
  const int d0 = row0 * kStateRows;
  const float decay = sm[L::eg + kChunk - 1];
  float s[kStateRows];
#pragma unroll
  for (int r = 0; r < kStateRows; ++r) s[r] = sm[L::s + (d0 + r) * kTileCols + col] * decay;
  for (int j = 0; j < kChunk; ++j) {
    const float w = sm[L::xb + j * kTileCols + col] * sm[L::ed + j];
    const float* b = sm + L::b + j * L::ldn + d0;
    if constexpr (kStateRows % 4 == 0) {
#pragma unroll
      for (int r = 0; r < kStateRows; r += 4) {
        const float4 bv = *reinterpret_cast<const float4*>(b + r);
        s[r] += bv.x * w, s[r + 1] += bv.y * w, s[r + 2] += bv.z * w, s[r + 3] += bv.w * w;
      }
    } else {
#pragma unroll
      for (int r = 0; r < kStateRows; ++r) s[r] += b[r] * w;
    }
  }
#pragma unroll
  for (int r = 0; r < kStateRows; ++r) sm[L::s + (d0 + r) * kTileCols + col] = s[r];
}

// Grid (hd / kTileCols, nh). Per chunk: y = exp(acs) (C S) + P xb + D x; then the state update.
template <typename T, int N>
__global__ void __launch_bounds__(kScanThreads) ssd_chunk_scan_kernel(SsdParams p, int64_t num_chunks) {
  using L = SsdSmem<N>;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  const int64_t h = blockIdx.y, c0 = static_cast<int64_t>(blockIdx.x) * kTileCols;
  const int col = threadIdx.x % kTileCols, row0 = threadIdx.x / kTileCols;
  const float d_skip = p.D != nullptr ? p.D[h] : 0.0f;
  float* state = p.state + (h * p.hd + c0) * N;
  for (int idx = threadIdx.x; idx < N * kTileCols; idx += blockDim.x)
    sm[L::s + idx] = state[(idx % kTileCols) * N + idx / kTileCols];
  for (int64_t chunk = 0; chunk < num_chunks; ++chunk) {
    const int64_t t0 = chunk * kChunk;
    const int len = scan_chunk_len(p.tokens, t0);
    ssd_load<T, N>(p, t0, len, h, c0, sm);
    ssd_products<N>(sm);
    __syncthreads();
    float from_state[kRowsPerThread] = {}, in_chunk[kRowsPerThread] = {};
    rows_times_column<N>(sm + L::c, L::ldn, sm + L::s, row0, col, from_state);
    rows_times_column<kChunk>(sm + L::pm, L::ldp, sm + L::xb, row0, col, in_chunk);
    T* y = static_cast<T*>(p.y) + h * p.hd + c0 + col;
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r) {
      const int i = row0 + kRowGroups * r;
      const float v = (in_chunk[r] + from_state[r] * sm[L::eg + i]) + d_skip * sm[L::x + i * kTileCols + col];
      if (i < len) y[(t0 + i) * p.nh * p.hd] = from_f32<T>(v);
    }
    __syncthreads();  // every thread read S above; the update below rewrites it
    ssd_state_update<N>(sm, row0, col);
    __syncthreads();  // the next chunk's loads overwrite what this one read
  }
  for (int idx = threadIdx.x; idx < N * kTileCols; idx += blockDim.x)
    state[(idx % kTileCols) * N + idx / kTileCols] = sm[L::s + idx];
}

template <typename T, int N>
void launch_chunked(const SsdParams& p) {
  constexpr size_t smem = SsdSmem<N>::total * sizeof(float);
  STRATA_CUDA_CHECK(cudaFuncSetAttribute(ssd_chunk_scan_kernel<T, N>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const dim3 grid(static_cast<unsigned>(p.hd / kTileCols), static_cast<unsigned>(p.nh));
  ssd_chunk_scan_kernel<T, N><<<grid, kScanThreads, smem, current_stream()>>>(p, ceil_div(p.tokens, kChunk));
  STRATA_CUDA_CHECK_LAUNCH();
}

template <typename T>
void launch_chunked_n(const SsdParams& p) {
  switch (p.n) {
    case 16: launch_chunked<T, 16>(p); break;
    case 32: launch_chunked<T, 32>(p); break;
    case 64: launch_chunked<T, 64>(p); break;
    case 128: launch_chunked<T, 128>(p); break;
    case 256: launch_chunked<T, 256>(p); break;
    default:
      throw Error("ssd_scan: state size " + std::to_string(p.n) +
                  " has no chunked CUDA kernel (16..256, powers of 2)");
  }
}

}  // namespace

void launch_ssd_chunked(const SsdParams& p, DType dtype) {
  STRATA_CHECK(p.intermediates == nullptr && p.hd % kTileCols == 0 && p.tokens > 0);
  if (dtype == DType::kBF16) {
    launch_chunked_n<__nv_bfloat16>(p);
  } else if (dtype == DType::kF32) {
    launch_chunked_n<float>(p);
  } else {
    unsupported_dtype("ssd_scan", dtype);
  }
}

}  // namespace strata::cuda
