// CUDA LoRA deltas: one block per token; the block first reduces A x into shared memory (one
// warp per rank row), then each thread adds its output columns' B row times that vector.
// Tokens without an adapter return at once, so a batch mostly on the base model pays little.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/lora.h"

namespace strata::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxRank = 256;

struct LoraParams {
  const __nv_bfloat16* x;  // [T, in]
  const __nv_bfloat16* a;  // [S, r, in]
  const __nv_bfloat16* b;  // [S, out, r]
  const float* scales;     // [S]
  const int32_t* slots;    // [T]
  __nv_bfloat16* y;        // [T, cols]
  int64_t in, rank, out, cols, col_offset, num_slots;
};

__global__ void __launch_bounds__(kThreads) lora_kernel(LoraParams p) {
  __shared__ float mid[kMaxRank];
  const int64_t t = blockIdx.x;
  const int32_t s = p.slots[t];
  if (s < 0 || s >= p.num_slots) return;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const __nv_bfloat16* x = p.x + t * p.in;
  for (int64_t r = warp; r < p.rank; r += kThreads / 32) {
    const __nv_bfloat16* a = p.a + (s * p.rank + r) * p.in;
    float acc = 0.0f;
    for (int64_t i = lane; i < p.in; i += 32) acc += __bfloat162float(a[i]) * __bfloat162float(x[i]);
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) mid[r] = acc;
  }
  __syncthreads();
  const float scale = p.scales[s];
  __nv_bfloat16* y = p.y + t * p.cols + p.col_offset;
  for (int64_t o = threadIdx.x; o < p.out; o += kThreads) {
    const __nv_bfloat16* b = p.b + (s * p.out + o) * p.rank;
    float acc = 0.0f;
    for (int64_t r = 0; r < p.rank; ++r) acc += __bfloat162float(b[r]) * mid[r];
    y[o] = __float2bfloat16(__bfloat162float(y[o]) + scale * acc);
  }
}

}  // namespace

void lora_add(const ops::LoraArgs& args) {
  if (args.x.dtype() != DType::kBF16 || args.y.dtype() != DType::kBF16 || args.a.dtype() != DType::kBF16 ||
      args.b.dtype() != DType::kBF16)
    unsupported_dtype("lora_add (bf16 activations and adapters)", args.x.dtype());
  STRATA_CHECK_MSG(args.a.dim(1) <= kMaxRank, "LoRA rank {} above {}", args.a.dim(1), kMaxRank);
  const LoraParams p{.x = args.x.data_as<const __nv_bfloat16>(), .a = args.a.data_as<const __nv_bfloat16>(),
                     .b = args.b.data_as<const __nv_bfloat16>(), .scales = args.scales.data_as<const float>(),
                     .slots = args.token_slots.data_as<const int32_t>(), .y = args.y.data_as<__nv_bfloat16>(),
                     .in = args.x.dim(1), .rank = args.a.dim(1), .out = args.b.dim(1), .cols = args.y.dim(1),
                     .col_offset = args.col_offset, .num_slots = args.a.dim(0)};
  lora_kernel<<<args.x.dim(0), kThreads, 0, current_stream()>>>(p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
