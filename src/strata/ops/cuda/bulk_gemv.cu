// The bulk-copy streaming kernel for a few rows of x per weight matrix (MoE decode, dense
// linears at 1-8 rows): a block takes one tile (up to 8 rows of one expert) and `features`
// consecutive weight rows (~32 KB), has the copy engine move them into shared memory with one
// cp.async.bulk, and its 4 warps dot them with the tile's x rows (read through L1). Six blocks
// per SM keep ~190 KB of weights in flight per SM without spending registers on them.
#include "strata/ops/cuda/bulk_copy.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/dot_bf16.cuh"
#include "strata/ops/cuda/expert_tiles.cuh"
#include "strata/ops/cuda/grouped_gemm.h"

namespace strata::cuda {
namespace {

using bf16 = __nv_bfloat16;
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTileRows = 8;
constexpr int kBlocksPerSm = 6;
constexpr int64_t kStageBytes = 32 * 1024;  // weight rows per block: 6 blocks fit 228 KB
constexpr int64_t kMaxFeatures = 64;

struct Layout {
  int64_t features;  // weight rows per block
  int slices;        // warps sharing one weight row (K split) when features < kWarps
};

Layout layout_for(int64_t k) {
  int64_t features = kStageBytes / (k * 2);
  features = features > kMaxFeatures ? kMaxFeatures : (features >= kWarps ? features / kWarps * kWarps : features);
  return {.features = features, .slices = features >= kWarps ? 1 : static_cast<int>(kWarps / features)};
}

struct BlockWork {
  const bf16* stage;  // [features, K] weight rows in shared memory
  const bf16* x;      // the tile's first x row, [rows, K]
  float* partial;     // [features * slices][kTileRows] shared: one dot per (item, row)
  int64_t k, features;
  int slices, rows;
};

// Item i = (weight row i / slices, K slice i % slices); warp w takes items w, w + 4, ...
// R: a power of two >= rows; rows past `rows` are skipped.
template <int R>
__device__ void dot_items(const BlockWork& b) {
  constexpr int kUnroll = R >= 8 ? 1 : (R >= 4 ? 2 : 4);  // x loads in flight fit the registers
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t chunks = b.k / 8;
  for (int64_t item = warp; item < b.features * b.slices; item += kWarps) {
    const int64_t f = item / b.slices, s = item % b.slices;
    const int64_t c_end = (s + 1) * chunks / b.slices;
    const uint4* w = reinterpret_cast<const uint4*>(b.stage + f * b.k);
    float acc[R] = {};
#pragma unroll kUnroll
    for (int64_t c = s * chunks / b.slices + lane; c < c_end; c += 32) {
      const uint4 wv = w[c];
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < b.rows) fma_bf16x8(acc[r], wv, __ldg(reinterpret_cast<const uint4*>(b.x + r * b.k) + c));
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      for (int o = 16; o > 0; o >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], o);
      if (lane == 0 && r < b.rows) b.partial[item * kTileRows + r] = acc[r];
    }
  }
}

template <typename Tout>
__global__ void __launch_bounds__(kThreads, kBlocksPerSm)
    bulk_gemv_kernel(GroupedGemmArgs p, Layout layout, int64_t feature_chunks) {
  extern __shared__ __align__(128) unsigned char stage[];  // [features, K] bf16
  __shared__ ExpertTileShared tile_shared;
  __shared__ float partial[kMaxFeatures * kTileRows];
  __shared__ __align__(8) uint64_t barrier;
  const int64_t chunk = blockIdx.x % feature_chunks, index = blockIdx.x / feature_chunks;
  ExpertTile tile{.expert = 0, .row_begin = 0, .row_end = p.m};  // dense: one tile of all rows
  if (p.offsets != nullptr &&
      !find_expert_tile(p.offsets, p.num_experts, p.m, kTileRows, index, tile, tile_shared))
    return;
  const int64_t n0 = chunk * layout.features;
  const int64_t features = p.n - n0 < layout.features ? p.n - n0 : layout.features;
  if (threadIdx.x == 0) {
    const bf16* src = static_cast<const bf16*>(p.weight) + (tile.expert * p.n + n0) * p.k;
    mbarrier_init(smem_address(&barrier));
    bulk_copy_to_shared(smem_address(&barrier), smem_address(stage), src,
                        static_cast<uint32_t>(features * p.k * static_cast<int64_t>(sizeof(bf16))));
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  mbarrier_wait(smem_address(&barrier), 0);
  const BlockWork b{.stage = reinterpret_cast<const bf16*>(stage),
                    .x = static_cast<const bf16*>(p.x) + tile.row_begin * p.k, .partial = partial,
                    .k = p.k, .features = features, .slices = layout.slices,
                    .rows = static_cast<int>(tile.row_end - tile.row_begin)};
  if (b.rows == 1) {
    dot_items<1>(b);
  } else if (b.rows == 2) {
    dot_items<2>(b);
  } else if (b.rows <= 4) {
    dot_items<4>(b);
  } else {
    dot_items<8>(b);
  }
  __syncthreads();
  // Feature fastest: neighbouring threads store neighbouring outputs of one row.
  const bf16* bias = static_cast<const bf16*>(p.bias);
  for (int64_t i = threadIdx.x; i < features * b.rows; i += kThreads) {
    const int64_t f = i % features, r = i / features;
    float v = bias != nullptr ? __bfloat162float(bias[n0 + f]) : 0.0f;
    for (int s = 0; s < layout.slices; ++s) v += partial[(f * layout.slices + s) * kTileRows + r];
    static_cast<Tout*>(p.out)[(tile.row_begin + r) * p.n + n0 + f] = from_f32<Tout>(v);
  }
}

template <typename Tout>
void launch(const GroupedGemmArgs& args, cudaStream_t stream) {
  static const bool configured = [] {
    STRATA_CUDA_CHECK(cudaFuncSetAttribute(bulk_gemv_kernel<Tout>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                           cudaSharedmemCarveoutMaxShared));
    return true;
  }();
  (void)configured;
  const Layout layout = layout_for(args.k);
  const int64_t feature_chunks = ceil_div(args.n, layout.features);
  const int64_t tiles = args.offsets == nullptr ? 1 : expert_tile_bound(args.m, args.num_experts, kTileRows);
  const int64_t blocks = feature_chunks * tiles;
  STRATA_CHECK(blocks < (int64_t{1} << 31));
  const size_t smem = static_cast<size_t>(layout.features * args.k * static_cast<int64_t>(sizeof(bf16)));
  bulk_gemv_kernel<Tout><<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(args, layout, feature_chunks);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool bulk_gemv_supported(const GroupedGemmArgs& args) {
  auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  const bool dense_ok = args.offsets != nullptr || (args.num_experts == 1 && args.m <= kTileRows);
  const bool bias_ok = args.bias == nullptr || args.offsets == nullptr;
  return args.k % 8 == 0 && args.k > 0 && args.k * 2 <= kStageBytes && aligned(args.x) && aligned(args.weight) &&
         dense_ok && bias_ok && (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

void bulk_gemv(const GroupedGemmArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0 || args.num_experts == 0) return;
  STRATA_CHECK(bulk_gemv_supported(args));
  if (args.out_dtype == DType::kF32) {
    launch<float>(args, stream);
  } else {
    launch<bf16>(args, stream);
  }
}

}  // namespace strata::cuda
