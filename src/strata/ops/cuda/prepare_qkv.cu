// CUDA prepare_qkv: blocks of 8 warps over (token, group of 8 heads), one warp per head
// (q heads, then k, then v), so a decode step of one token still spreads over SMs. A
// head is staged in shared memory as f32, normalised and rounded like the separate RMSNorm
// kernel, rotated like the rope kernel, then written to q_out or the cache slot.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/fp8.cuh"
#include "strata/ops/cuda/pdl.cuh"
#include "strata/ops/prepare_qkv.h"

namespace strata::cuda {
namespace {

constexpr int kWarps = 8;

struct PrepareQkvKernelParams {
  const void* qkv;           // [T, (nh + 2 nkv) * hd]
  const void* q_norm;        // [hd] or null
  const void* k_norm;        // [hd] or null
  bool norm_f32;             // norm weights in f32 (else bf16)
  const int32_t* positions;  // [T]
  const float* inv_freq;     // [half]
  const int32_t* slots;      // [T]
  void* k_cache;             // [num_slots, nkv, hd]
  void* v_cache;             // [num_slots, nkv, hd]
  void* q_out;               // [T, nh, hd]
  bool cache_fp8;            // caches hold e4m3 codes (--kv-cache-dtype fp8), else T
  int64_t num_slots;
  int nh, nkv, hd, half;
  float attention_scaling, eps, weight_offset;
};

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float norm_weight(const PrepareQkvKernelParams& p, const void* w, int i) {
  return p.norm_f32 ? static_cast<const float*>(w)[i] : __bfloat162float(static_cast<const __nv_bfloat16*>(w)[i]);
}

template <typename T>
__global__ void __launch_bounds__(kWarps * 32) prepare_qkv_kernel(PrepareQkvKernelParams p) {
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  wait_for_previous_kernel();
  extern __shared__ float staged[];  // [kWarps, hd]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t t = blockIdx.x;
  const int head = static_cast<int>(blockIdx.y) * kWarps + warp;
  float* h = staged + warp * p.hd;
  const T* row = static_cast<const T*>(p.qkv) + t * static_cast<int64_t>(p.nh + 2 * p.nkv) * p.hd;
  const int64_t slot = p.slots[t];
  const bool cached = slot >= 0 && slot < p.num_slots;
  const float pos = static_cast<float>(p.positions[t]);
  if (head >= p.nh + 2 * p.nkv) return;
  const bool is_q = head < p.nh, is_v = head >= p.nh + p.nkv;
  if (!is_q && !cached) return;
  const T* src = row + static_cast<int64_t>(head) * p.hd;
  float ss = 0.0f;
  for (int i = lane; i < p.hd; i += 32) {
    const float x = to_f32(src[i]);
    h[i] = x;
    ss += x * x;
  }
  if (!is_v && p.q_norm != nullptr) {
    const float inv = rsqrtf(warp_sum(ss) / static_cast<float>(p.hd) + p.eps);
    const void* w = is_q ? p.q_norm : p.k_norm;
    for (int i = lane; i < p.hd; i += 32) h[i] = to_f32(from_f32<T>(h[i] * inv * (norm_weight(p, w, i) + p.weight_offset)));
  }
  __syncwarp();
  if (!is_v) {
    for (int i = lane; i < p.half; i += 32) {
      float s, c;
      sincosf(pos * p.inv_freq[i], &s, &c);
      c *= p.attention_scaling;
      s *= p.attention_scaling;
      const float a = h[i], b = h[i + p.half];
      h[i] = a * c - b * s;
      h[i + p.half] = b * c + a * s;
    }
    __syncwarp();
  }
  if (is_q) {
    T* dst = static_cast<T*>(p.q_out) + (t * p.nh + head) * p.hd;
    for (int i = lane; i < p.hd; i += 32) dst[i] = from_f32<T>(h[i]);
    return;
  }
  const int kvh = is_v ? head - p.nh - p.nkv : head - p.nh;
  const int64_t at = (slot * p.nkv + kvh) * p.hd;
  if (p.cache_fp8) {  // narrowed from f32, as the CPU's store narrows its f32 rows
    uint8_t* dst = static_cast<uint8_t*>(is_v ? p.v_cache : p.k_cache) + at;
    for (int i = lane; i < p.hd; i += 32) dst[i] = float_to_fp8(h[i]);
    return;
  }
  T* dst = static_cast<T*>(is_v ? p.v_cache : p.k_cache) + at;
  for (int i = lane; i < p.hd; i += 32) dst[i] = from_f32<T>(h[i]);
}

}  // namespace

void prepare_qkv(const ops::PrepareQkvArgs& args, const ops::PrepareQkvParams& params) {
  const int64_t t = args.qkv.dim(0);
  if (t == 0) return;
  const DType cache = args.k_cache.dtype();
  if (args.qkv.dtype() != DType::kBF16 || args.q_out.dtype() != DType::kBF16 ||
      (cache != DType::kBF16 && cache != DType::kF8_E4M3) || args.v_cache.dtype() != cache)
    unsupported_dtype("prepare_qkv (bf16 qkv and q_out, bf16 or e4m3 caches)", cache);
  const bool norm = args.q_norm.defined();
  if (norm && (args.q_norm.dtype() != args.k_norm.dtype() ||
               (args.q_norm.dtype() != DType::kF32 && args.q_norm.dtype() != DType::kBF16)))
    unsupported_dtype("prepare_qkv norm weights", args.q_norm.dtype());
  const int hd = static_cast<int>(args.q_out.dim(2));
  const PrepareQkvKernelParams p{
      .qkv = args.qkv.data(), .q_norm = norm ? args.q_norm.data() : nullptr,
      .k_norm = norm ? args.k_norm.data() : nullptr, .norm_f32 = norm && args.q_norm.dtype() == DType::kF32,
      .positions = args.positions.data_as<int32_t>(),
      .inv_freq = params.rotary_dim > 0 ? args.inv_freq.data_as<float>() : nullptr,
      .slots = args.slot_mapping.data_as<int32_t>(), .k_cache = args.k_cache.data(), .v_cache = args.v_cache.data(),
      .q_out = args.q_out.data(), .cache_fp8 = cache == DType::kF8_E4M3, .num_slots = args.k_cache.dim(0) * args.k_cache.dim(1),
      .nh = static_cast<int>(args.q_out.dim(1)), .nkv = static_cast<int>(args.k_cache.dim(2)), .hd = hd,
      .half = static_cast<int>(params.rotary_dim / 2), .attention_scaling = params.attention_scaling,
      .eps = params.norm_eps, .weight_offset = params.norm_unit_offset ? 1.0f : 0.0f};
  const dim3 grid(static_cast<unsigned>(t), static_cast<unsigned>(ceil_div(p.nh + 2 * p.nkv, kWarps)));
  launch_dependent(prepare_qkv_kernel<__nv_bfloat16>, grid, dim3(kWarps * 32), kWarps * hd * sizeof(float),
                   current_stream(), p);
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
