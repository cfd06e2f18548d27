// The entry of the quantized GEMM: checks, how many blocks split K, the sum of the splits'
// partials, and the dtype's format (the format files instantiate quant_mma_gemm.cuh).
#include "strata/ops/cuda/quant_mma_gemm.h"

#include <algorithm>

#include "strata/backend/cuda/scratch_pool.h"
#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/nibble_mma.cuh"
#include "strata/ops/cuda/nibble_quant_mma_gemv.h"
#include "strata/weights/device_layout.h"

namespace strata::cuda {
namespace {

using mma_gemv::bf16;
using quant_gemm::Launch;

constexpr int kMaxSplits = 4;

bool weight_aligned(DType dtype, const void* weight, int64_t k) {
  if (dtype == DType::kF8_E4M3_B128) return mma_gemv::aligned(weight, fp8_row_bytes(k) % 16 == 0 ? 16 : 8);
  if (dtype == DType::kQ8_0) return mma_gemv::aligned(weight, 8);
  return mma_gemv::aligned(weight, 16);
}

// Past 32 rows a block takes 64: each weight unit is loaded and widened once for twice the rows.
int auto_tile_rows(const QuantGemvArgs& args) { return args.m <= 32 ? 32 : 64; }

// A grid short of the blocks that fit at once (o_proj's 32 blocks at 32 rows) splits K: at most
// kMaxSplits (the partials cost M N 4 bytes each), at least two K tiles a split.
int64_t auto_splits(const QuantGemvArgs& args, int tile_rows, int64_t tiles) {
  const int64_t blocks = ceil_div(args.m, tile_rows) * ceil_div(args.n, quant_gemm::kBlockN);
  const int64_t resident = (tile_rows == 32 ? 2 : 1) * num_sms();
  if (2 * blocks > resident) return 1;
  return std::clamp<int64_t>(std::min(ceil_div(resident, blocks), tiles / 2), 1, kMaxSplits);
}

struct SplitSum {
  const float* partials;  // [splits, M, N]
  void* out;              // [M, N]
  const bf16* bias;       // [N] or null
  int64_t count, n;       // M N, N
  int splits;
  bool accumulate;
};

template <typename Tout>
__global__ void split_sum_kernel(SplitSum s) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < s.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = 0.f;
    for (int z = 0; z < s.splits; ++z) v += s.partials[z * s.count + i];
    if (s.bias != nullptr) v += __bfloat162float(s.bias[i % s.n]);
    Tout* dst = static_cast<Tout*>(s.out) + i;
    if (s.accumulate) v += to_f32(*dst);
    *dst = from_f32<Tout>(v);
  }
}

void launch_format(DType dtype, const Launch& launch, cudaStream_t stream) {
  if (dtype == DType::kF8_E4M3_B128) return fp8_mma_gemm(launch, stream);
  if (dtype == DType::kQ8_0) return q8_0_mma_gemm(launch, stream);
  if (dtype == DType::kQ4_K || dtype == DType::kQ5_K || dtype == DType::kQ6_K)
    return nibble_mma::gemm_k_quant(dtype, launch, stream);
  nibble_mma::gemm_legacy(dtype, launch, stream);
}

// K split over `splits` launches' blocks into f32 partials, then summed into out with the
// bias and the accumulation.
void launch_split(DType dtype, const QuantGemvArgs& args, Launch launch, cudaStream_t stream) {
  const int64_t count = args.m * args.n;
  auto* partials = static_cast<float*>(
      scratch(ScratchUse::kQuantGemmPartials, launch.splits * count * static_cast<int64_t>(sizeof(float))));
  launch.p.out = partials;
  launch.p.bias = nullptr;
  launch.p.accumulate = false;
  launch.out_dtype = DType::kF32;
  launch_format(dtype, launch, stream);
  const SplitSum sum{.partials = partials, .out = args.out, .bias = static_cast<const bf16*>(args.bias),
                     .count = count, .n = args.n, .splits = static_cast<int>(launch.splits),
                     .accumulate = args.accumulate};
  constexpr int kSumThreads = 256;
  if (args.out_dtype == DType::kF32)
    split_sum_kernel<float><<<grid_for(count, kSumThreads), kSumThreads, 0, stream>>>(sum);
  else
    split_sum_kernel<bf16><<<grid_for(count, kSumThreads), kSumThreads, 0, stream>>>(sum);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool quant_mma_gemm_supported(DType dtype, const QuantGemvArgs& args) {
  const bool format = dtype == DType::kF8_E4M3_B128 || dtype == DType::kQ8_0 || is_nibble_quant(dtype);
  return format && keeps_device_layout(dtype, args.k) && args.k > 0 && args.k % quant_gemm::kTileK == 0 &&
         args.m >= 1 && !args.gated_input && mma_gemv::aligned(args.x, 16) &&
         weight_aligned(dtype, args.weight, args.k) &&
         (args.out_dtype == DType::kBF16 || args.out_dtype == DType::kF32);
}

bool quant_mma_gemm_stages_weights(DType dtype) {
  return dtype == DType::kQ4_K || dtype == DType::kQ5_K || dtype == DType::kQ8_0;
}

void quant_mma_gemm(DType dtype, const QuantGemvArgs& args, cudaStream_t stream, QuantGemmOptions options) {
  if (args.n == 0) return;
  STRATA_CHECK(quant_mma_gemm_supported(dtype, args));
  STRATA_CHECK(!options.staged_weights || (quant_mma_gemm_stages_weights(dtype) && mma_gemv::aligned(args.weight, 16)));
  STRATA_CHECK(options.tile_rows == 0 || options.tile_rows == 32 || options.tile_rows == 64);
  const int64_t tiles = args.k / quant_gemm::kTileK;
  const int tile_rows = options.tile_rows > 0 ? options.tile_rows : auto_tile_rows(args);
  const int64_t wanted = options.k_splits > 0 ? options.k_splits : auto_splits(args, tile_rows, tiles);
  const int64_t per_split = ceil_div(tiles, std::clamp<int64_t>(wanted, 1, tiles));
  Launch launch{.p = mma_gemv::params_for(args), .tiles_per_split = per_split,
                .splits = static_cast<unsigned>(ceil_div(tiles, per_split)), .tile_rows = tile_rows,
                .out_dtype = args.out_dtype, .staged = options.staged_weights};
  if (launch.splits == 1) return launch_format(dtype, launch, stream);
  launch_split(dtype, args, launch, stream);
}

}  // namespace strata::cuda
