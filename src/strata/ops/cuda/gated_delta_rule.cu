// CUDA gated delta rule, recurrent form: one block per (value head, 64 state columns), as the
// columns of a head's state [dk, dv] update independently; thread (column j, part p) holds rows
// [p * R, (p + 1) * R) of column j in registers, and the four parts of a column are adjacent
// lanes, so kᵀS and qᵀS reduce with two shuffles.
// Tokens run in order; per-token states are written when asked (verify rows). A batched
// decode step runs one single-token sequence per blockIdx.y with its slot's state. Long rows
// without them take the chunked form (gated_delta_rule_chunked.cu); gated_delta_rule_cuda_form picks.
#include <algorithm>
#include <cmath>

#include "strata/ops/cuda/gated_delta_rule.cuh"
#include "strata/ops/gated_delta_rule.h"

namespace strata::cuda {
namespace {

constexpr int kParts = 4;
constexpr int kColumnsPerBlock = 64;  // 256 threads: up to 255 registers for R = 64

// Loads one token's q and k rows of key head kh into shared memory, l2-normalised (q also
// scaled), and the head's decay and beta; called by the whole block.
template <typename T>
__device__ void load_token(const GdnParams& p, int64_t t, int h, float* q, float* k, float* gb) {
  const int64_t kh = h / (p.nv / p.nk);
  const T* row = static_cast<const T*>(p.qkv) + t * p.stride;
  for (int64_t i = threadIdx.x; i < p.dk; i += blockDim.x) {
    q[i] = to_f32(row[kh * p.dk + i]);
    k[i] = to_f32(row[p.nk * p.dk + kh * p.dk + i]);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    float sq = 0.0f, sk = 0.0f;
    for (int64_t i = threadIdx.x; i < p.dk; i += 32) sq += q[i] * q[i], sk += k[i] * k[i];
    for (int o = 16; o > 0; o >>= 1) {
      sq += __shfl_xor_sync(0xffffffffu, sq, o);
      sk += __shfl_xor_sync(0xffffffffu, sk, o);
    }
    if (threadIdx.x == 0) {
      gb[2] = 1.0f / sqrtf(sq + 1e-6f);
      gb[3] = 1.0f / sqrtf(sk + 1e-6f);
      const float2 g_beta = gdn_gate<T>(p, t, h);
      gb[0] = expf(g_beta.x);
      gb[1] = g_beta.y;
    }
  }
  __syncthreads();
}

template <typename T, int R>
__global__ void __launch_bounds__(kColumnsPerBlock * kParts) gdn_recurrent_kernel(GdnParams p) {
  extern __shared__ float smem[];
  float* q = smem;
  float* k = q + p.dk;
  float* gb = k + p.dk;  // decay, beta, 1/|q|, 1/|k|
  const int h = blockIdx.x;
  const int64_t j = blockIdx.z * kColumnsPerBlock + threadIdx.x / kParts, part = threadIdx.x % kParts;
  const bool active = j < p.dv;
  float s[R];
  int64_t t_begin = 0, t_end = p.tokens, slot = 0;
  if (p.slots != nullptr) {
    slot = p.slots[blockIdx.y];
    if (slot < 0 || slot >= p.num_slots) return;  // the whole block: no barrier is left waiting
    t_begin = blockIdx.y, t_end = t_begin + 1;
  }
  float* state = p.state + (slot * p.nv + h) * p.dk * p.dv;
#pragma unroll
  for (int r = 0; r < R; ++r) s[r] = active ? state[(part * R + r) * p.dv + j] : 0.0f;
  for (int64_t t = t_begin; t < t_end; ++t) {
    load_token<T>(p, t, h, q, k, gb);
    const float decay = gb[0], beta = gb[1], qn = gb[2] * p.scale, kn = gb[3];
    float ks = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s[r] *= decay;
      ks += k[part * R + r] * kn * s[r];
    }
    ks += __shfl_xor_sync(0xffffffffu, ks, 1);
    ks += __shfl_xor_sync(0xffffffffu, ks, 2);
    const T* row = static_cast<const T*>(p.qkv) + t * p.stride + 2 * p.nk * p.dk + h * p.dv;
    const float delta = active ? (to_f32(row[j]) - ks) * beta : 0.0f;
    float o = 0.0f;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      s[r] += k[part * R + r] * kn * delta;
      o += q[part * R + r] * qn * s[r];
    }
    o += __shfl_xor_sync(0xffffffffu, o, 1);
    o += __shfl_xor_sync(0xffffffffu, o, 2);
    if (active && part == 0) static_cast<T*>(p.out)[(t * p.nv + h) * p.dv + j] = from_f32<T>(o);
    if (p.intermediates != nullptr && active) {
      float* dst = p.intermediates + ((t * p.nv + h) * p.dk) * p.dv;
#pragma unroll
      for (int r = 0; r < R; ++r) dst[(part * R + r) * p.dv + j] = s[r];
    }
    __syncthreads();  // q, k and gb are reloaded for the next token
  }
  if (active)
#pragma unroll
    for (int r = 0; r < R; ++r) state[(part * R + r) * p.dv + j] = s[r];
}

template <typename T>
void launch_gdn(const GdnParams& p) {
  const int64_t columns = std::min<int64_t>(p.dv, kColumnsPerBlock);
  const unsigned threads = static_cast<unsigned>(ceil_div(columns * kParts, 32) * 32);
  const size_t smem = (2 * p.dk + 4) * sizeof(float);
  const cudaStream_t stream = current_stream();
  const dim3 grid(static_cast<unsigned>(p.nv), p.slots != nullptr ? static_cast<unsigned>(p.tokens) : 1u,
                  static_cast<unsigned>(ceil_div(p.dv, kColumnsPerBlock)));
  switch (p.dk) {
    case 32: gdn_recurrent_kernel<T, 8><<<grid, threads, smem, stream>>>(p); break;
    case 64: gdn_recurrent_kernel<T, 16><<<grid, threads, smem, stream>>>(p); break;
    case 128: gdn_recurrent_kernel<T, 32><<<grid, threads, smem, stream>>>(p); break;
    case 256: gdn_recurrent_kernel<T, 64><<<grid, threads, smem, stream>>>(p); break;
    default:  // refused at model build (ops::check_gated_delta_rule_supported)
      throw Error("gated_delta_rule: key head dim " + std::to_string(p.dk) +
                  " is not supported on CUDA (32, 64, 128 or 256)");
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void gated_delta_rule(const ops::GatedDeltaRuleArgs& args, ops::GatedDeltaRuleForm form) {
  const int64_t t = args.qkv.dim(0), nv = args.state.dim(-3), dk = args.state.dim(-2), dv = args.state.dim(-1);
  const bool batched = args.state_slots.defined();
  if (t == 0) return;
  if (batched && (form != ops::GatedDeltaRuleForm::kRecurrent || t > 65535))  // rows <= max_num_seqs
    throw Error("gated_delta_rule: a batched decode step runs the recurrent form, at most 65535 rows (got " +
                std::to_string(t) + ")");
  STRATA_CHECK(args.a.dtype() == args.qkv.dtype() && args.b.dtype() == args.qkv.dtype() &&
               args.out.dtype() == args.qkv.dtype());
  const bool intermediates = args.intermediate_states.defined();
  if (form == ops::GatedDeltaRuleForm::kChunked &&
      ops::gated_delta_rule_cuda_form(ops::kGatedDeltaRuleChunkTokens, dk, dv, intermediates) !=
          ops::GatedDeltaRuleForm::kChunked) {
    throw Error("gated_delta_rule: the chunked form needs no intermediate_states, k head dim 32, 64 "
                "or 128 (got " + std::to_string(dk) + ") and a v head dim that is a multiple of 32 (got " +
                std::to_string(dv) + "); use the recurrent form");
  }
  const GdnParams p{.qkv = args.qkv.data(), .a = args.a.data(), .b = args.b.data(),
                    .A_log = args.A_log.data_as<float>(), .dt_bias = args.dt_bias.data_as<float>(),
                    .state = args.state.data_as<float>(), .out = args.out.data(),
                    .intermediates = intermediates ? args.intermediate_states.data_as<float>() : nullptr,
                    .slots = batched ? args.state_slots.data_as<int32_t>() : nullptr,
                    .num_slots = batched ? args.state.dim(0) : 1,
                    .tokens = t, .nv = nv, .nk = (args.qkv.dim(1) - nv * dv) / (2 * dk), .dk = dk, .dv = dv,
                    .stride = args.qkv.dim(1),
                    .scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dk)))};
  if (args.qkv.dtype() != DType::kBF16 && args.qkv.dtype() != DType::kF32)
    unsupported_dtype("gated_delta_rule", args.qkv.dtype());
  if (form == ops::GatedDeltaRuleForm::kChunked) {
    launch_gdn_chunked(p, args.qkv.dtype());
  } else if (args.qkv.dtype() == DType::kBF16) {
    launch_gdn<__nv_bfloat16>(p);
  } else {
    launch_gdn<float>(p);
  }
}

void gated_delta_rule(const ops::GatedDeltaRuleArgs& args) {
  const ops::GatedDeltaRuleForm form =
      args.state_slots.defined() ? ops::GatedDeltaRuleForm::kRecurrent
                                 : ops::gated_delta_rule_cuda_form(args.qkv.dim(0), args.state.dim(1),
                                                                   args.state.dim(2), args.intermediate_states.defined());
  gated_delta_rule(args, form);
}

}  // namespace strata::cuda
