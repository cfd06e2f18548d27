// CUDA rotary embedding (rotate-half layout) on the first rotary_dim dims of each q and k
// head, in place. One block per token; the angle is computed in f32 with full-range sincosf
// because positions times frequencies reach 1e5 radians. With [3, T] positions (MRoPE) each
// frequency reads the stream its section names.
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/rope.h"

namespace strata::cuda {
namespace {

struct RopeKernelParams {
  void* q;                  // [T, num_q_heads, head_dim]
  void* k;                  // [T, num_kv_heads, head_dim]
  const int32_t* positions; // [T], or [3, T] when mrope
  const float* inv_freq;    // [rotary_dim / 2]
  int64_t num_q_heads;
  int64_t num_kv_heads;
  int64_t head_dim;
  int64_t half;             // rotary_dim / 2
  float attention_scaling;
  float sin_scaling;        // attention_scaling, negated for ops::RopeParams::inverse
  int64_t num_tokens;       // T: the stride between MRoPE streams
  bool mrope;
  ops::MropeSections sections;
};

template <typename T>
__global__ void rope_kernel(RopeKernelParams p) {
  const int64_t t = blockIdx.x;
  const int64_t pairs = (p.num_q_heads + p.num_kv_heads) * p.half;
  for (int64_t item = threadIdx.x; item < pairs; item += blockDim.x) {
    const int64_t head = item / p.half, i = item % p.half;
    T* v = head < p.num_q_heads
               ? static_cast<T*>(p.q) + (t * p.num_q_heads + head) * p.head_dim
               : static_cast<T*>(p.k) + (t * p.num_kv_heads + head - p.num_q_heads) * p.head_dim;
    const int64_t stream = p.mrope ? p.sections.stream(i) : 0;
    const float pos = static_cast<float>(p.positions[stream * p.num_tokens + t]);
    float s, c;
    sincosf(pos * p.inv_freq[i], &s, &c);
    c *= p.attention_scaling;
    s *= p.sin_scaling;
    const float a = to_f32(v[i]), b = to_f32(v[i + p.half]);
    v[i] = from_f32<T>(a * c - b * s);
    v[i + p.half] = from_f32<T>(b * c + a * s);
  }
}

}  // namespace

void rope(const Tensor& q, const Tensor& k, const Tensor& positions, const Tensor& inv_freq,
          const ops::RopeParams& params) {
  const int64_t num_tokens = q.dim(0);
  if (num_tokens == 0 || params.rotary_dim == 0) return;
  STRATA_CHECK(q.dtype() == k.dtype() && inv_freq.dtype() == DType::kF32);
  const RopeKernelParams p{.q = q.data(), .k = k.data(), .positions = positions.data_as<int32_t>(),
                           .inv_freq = inv_freq.data_as<float>(), .num_q_heads = q.dim(1),
                           .num_kv_heads = k.dim(1), .head_dim = q.dim(2),
                           .half = params.rotary_dim / 2,
                           .attention_scaling = params.attention_scaling,
                           .sin_scaling = params.inverse ? -params.attention_scaling : params.attention_scaling,
                           .num_tokens = num_tokens,
                           .mrope = positions.rank() == 2, .sections = params.mrope};
  const cudaStream_t stream = current_stream();
  if (q.dtype() == DType::kBF16) {
    rope_kernel<__nv_bfloat16><<<num_tokens, 256, 0, stream>>>(p);
  } else if (q.dtype() == DType::kF32) {
    rope_kernel<float><<<num_tokens, 256, 0, stream>>>(p);
  } else {
    unsupported_dtype("rope", q.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
