// Persistent weight-streaming GEMV (stream_gemv.h). Block b of G (one per SM) takes weight
// items b, b + G, b + 2G, ..., an item being a few whole rows (~16 KB), so the chip reads one
// contiguous window at a time (far-apart streams camp on a few DRAM channels). Thread 0 keeps
// up to `stages` items in flight with cp.async.bulk; the 8 warps dot each landed item with x
// (in shared memory), K split over warps when an item has fewer rows than warps.
#include <algorithm>

#include "strata/ops/cuda/bulk_copy.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dot_bf16.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/cuda/stream_gemv.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;
constexpr int kMaxStages = 16;
constexpr int64_t kMaxItemRows = 32;
constexpr int64_t kMaxUnits = kMaxItemRows;  // (row, K slice) pairs of one item
constexpr int64_t kItemBytes = 16 * 1024;
constexpr int64_t kPartialBytes = kMaxStages * kMaxUnits * kStreamGemvMaxRows * sizeof(float);

struct StreamParams {
  const bf16* x;       // [M, K]
  const bf16* weight;  // [N, K]
  const bf16* bias;    // [N] or null
  void* out;           // [M, N] bf16 or f32
  int64_t n, k;
  int64_t item_rows;     // weight rows per item (a power of two); the last item may have fewer
  int64_t num_items;
  int64_t stage_stride;  // bytes between stages in shared memory
  int stages, slices;    // slices: warps sharing one row (K split)
};

struct Layout {
  int64_t item_rows, stage_stride;
  int stages;
};

// Hopper's opt-in shared memory per block (sm_90a is the only target); a constant keeps the
// dense kernel rule free of device queries.
constexpr int64_t kMaxDynamicSmem = 227 * 1024;

Layout layout_for(int64_t m, int64_t k) {
  const int64_t row_bytes = k * 2;
  int64_t rows = 1;
  while (rows * 2 <= kMaxItemRows && rows * 2 * row_bytes <= kItemBytes) rows *= 2;
  const int64_t stride = ceil_div(rows * row_bytes, 128) * 128;
  const int64_t room = kMaxDynamicSmem - 1024 - kPartialBytes - m * row_bytes;
  const int64_t stages = std::min<int64_t>(kMaxStages, room > 0 ? room / stride : 0);
  return {.item_rows = rows, .stage_stride = stride, .stages = static_cast<int>(stages)};
}

__device__ __forceinline__ void fetch_item(const StreamParams& p, int64_t item, uint32_t barrier, unsigned char* stage) {
  const int64_t n0 = item * p.item_rows;
  const int64_t rows = p.n - n0 < p.item_rows ? p.n - n0 : p.item_rows;
  bulk_copy_to_shared(barrier, smem_address(stage), p.weight + n0 * p.k, static_cast<uint32_t>(rows * p.k * 2));
}

// Warp w dots units w, w + 8, ... (unit = row * slices + K slice) into partial[unit][M].
template <int M>
__device__ void dot_item(const StreamParams& p, const bf16* stage, const bf16* xs, int rows, float* partial) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t chunks = p.k / 8;
  const uint4* x4 = reinterpret_cast<const uint4*>(xs);
  for (int unit = warp; unit < rows * p.slices; unit += kWarps) {
    const int f = unit / p.slices, slice = unit % p.slices;
    const uint4* w = reinterpret_cast<const uint4*>(stage + f * p.k);
    float acc[M] = {};
#pragma unroll 4
    for (int64_t c = slice * chunks / p.slices + lane; c < (slice + 1) * chunks / p.slices; c += 32) {
      const uint4 wv = w[c];
#pragma unroll
      for (int r = 0; r < M; ++r) fma_bf16x8(acc[r], wv, x4[r * chunks + c]);
    }
#pragma unroll
    for (int r = 0; r < M; ++r) {
      for (int o = 16; o > 0; o >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], o);
      if (lane == 0) partial[unit * M + r] = acc[r];
    }
  }
}

template <typename Tout, int M>
__device__ void store_item(const StreamParams& p, int64_t n0, int rows, const float* partial) {
  for (int t = threadIdx.x; t < rows * M; t += kThreads) {
    const int f = t % rows, r = t / rows;
    float v = p.bias != nullptr ? __bfloat162float(p.bias[n0 + f]) : 0.0f;
    for (int s = 0; s < p.slices; ++s) v += partial[(f * p.slices + s) * M + r];
    static_cast<Tout*>(p.out)[r * p.n + n0 + f] = from_f32<Tout>(v);
  }
}

template <typename Tout, int M>
__global__ void __launch_bounds__(kThreads, 1) stream_gemv_kernel(StreamParams p) {
  extern __shared__ __align__(128) unsigned char smem[];  // stages, then x [M, K], then partials
  __shared__ __align__(8) uint64_t barriers[kMaxStages];
  bf16* xs = reinterpret_cast<bf16*>(smem + p.stages * p.stage_stride);
  float* partials = reinterpret_cast<float*>(xs + M * p.k);  // [stages][kMaxUnits][M]
  const int64_t stride = gridDim.x;
  const int64_t count = (p.num_items - blockIdx.x + stride - 1) / stride;  // items blockIdx.x + i * stride
  const uint32_t barrier0 = smem_address(barriers);
  if (threadIdx.x == 0) {  // the weights do not depend on the previous kernel: fetch them now
    for (int s = 0; s < p.stages; ++s) mbarrier_init(barrier0 + 8 * s);
    for (int64_t i = 0; i < count && i < p.stages; ++i)
      fetch_item(p, blockIdx.x + i * stride, barrier0 + 8 * i, smem + i * p.stage_stride);
  }
  allow_next_kernel();
  wait_for_previous_kernel();
  const uint4* x4 = reinterpret_cast<const uint4*>(p.x);
  for (int64_t c = threadIdx.x; c < M * p.k / 8; c += kThreads) reinterpret_cast<uint4*>(xs)[c] = x4[c];
  __syncthreads();
  for (int64_t i = 0; i < count; ++i) {
    const int s = static_cast<int>(i % p.stages);
    mbarrier_wait(barrier0 + 8 * s, static_cast<uint32_t>((i / p.stages) & 1));
    const int64_t n0 = (blockIdx.x + i * stride) * p.item_rows;
    const int rows = static_cast<int>(p.n - n0 < p.item_rows ? p.n - n0 : p.item_rows);
    float* partial = partials + s * kMaxUnits * M;
    dot_item<M>(p, reinterpret_cast<const bf16*>(smem + s * p.stage_stride), xs, rows, partial);
    __syncthreads();  // stage s is read and its partials written
    if (threadIdx.x == 0 && i + p.stages < count)
      fetch_item(p, blockIdx.x + (i + p.stages) * stride, barrier0 + 8 * s, smem + s * p.stage_stride);
    store_item<Tout, M>(p, n0, rows, partial);
  }
}

template <typename Tout, int M>
void launch(const StreamParams& p, size_t smem, cudaStream_t stream) {
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(stream_gemv_kernel<Tout, M>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(kMaxDynamicSmem - 1024)));
    return true;
  }();
  (void)configured;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(num_sms(), p.num_items)));
  launch_dependent(stream_gemv_kernel<Tout, M>, grid, dim3(kThreads), smem, stream, p);
}

template <typename Tout>
void launch_rows(const StreamParams& p, int64_t m, size_t smem, cudaStream_t stream) {
  switch (m) {
    case 1: launch<Tout, 1>(p, smem, stream); break;
    case 2: launch<Tout, 2>(p, smem, stream); break;
    case 3: launch<Tout, 3>(p, smem, stream); break;
    default: launch<Tout, 4>(p, smem, stream); break;
  }
}

}  // namespace

bool stream_gemv_supported(const GroupedGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  if (args.offsets != nullptr || args.num_experts != 1 || args.m < 1 || args.m > kStreamGemvMaxRows) return false;
  if (args.k <= 0 || args.k % 8 != 0 || !aligned(args.x) || !aligned(args.weight)) return false;
  if (args.out_dtype != DType::kBF16 && args.out_dtype != DType::kF32) return false;
  return layout_for(args.m, args.k).stages >= 2;
}

void stream_gemv(const GroupedGemmArgs& args, cudaStream_t stream) {
  if (args.n == 0) return;
  STRATA_CHECK(stream_gemv_supported(args));
  const Layout layout = layout_for(args.m, args.k);
  const StreamParams p{.x = static_cast<const bf16*>(args.x), .weight = static_cast<const bf16*>(args.weight),
                       .bias = static_cast<const bf16*>(args.bias), .out = args.out, .n = args.n, .k = args.k,
                       .item_rows = layout.item_rows, .num_items = ceil_div(args.n, layout.item_rows),
                       .stage_stride = layout.stage_stride, .stages = layout.stages,
                       .slices = static_cast<int>(layout.item_rows >= kWarps ? 1 : kWarps / layout.item_rows)};
  const size_t smem = static_cast<size_t>(layout.stages * layout.stage_stride + args.m * args.k * 2 + kPartialBytes);
  if (args.out_dtype == DType::kF32) {
    launch_rows<float>(p, args.m, smem, stream);
  } else {
    launch_rows<bf16>(p, args.m, smem, stream);
  }
}

}  // namespace strata::cuda
