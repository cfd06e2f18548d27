// CUDA depthwise causal conv1d with carried state: one thread per channel walks the tokens
// in order, keeping the K-1 previous inputs in registers (coalesced across channels). A batched
// decode step runs one single-token sequence per blockIdx.y with its slot's state. Kernels up
// to 8 taps keep 8 registers; wider ones (Qwen4-Exp's dilated PLE conv) take the 16-tap variant.
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {
namespace {

constexpr int kNarrowKernel = 8;
constexpr int kMaxKernel = static_cast<int>(ops::kCudaMaxConvKernel);

struct ConvParams {
  const void* x;        // [T, C]
  const float* weight;  // [C, K]
  const float* bias;    // [C] or null
  float* state;         // [C, K-1], or [num_slots, C, K-1] with slots
  void* out;            // [T, C], may alias x
  float* intermediates; // [T, C, K-1] or null
  const int32_t* slots; // [T] state slot of each single-token row, or null (one sequence)
  int64_t num_slots;    // state is [num_slots, C, K-1] when slots is set
  int64_t tokens, channels;
  int kernel;
  bool silu;
};

template <typename T, int kTaps>
__global__ void causal_conv1d_kernel(ConvParams p) {
  const int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (c >= p.channels) return;
  const int hist_len = p.kernel - 1;
  int64_t t_begin = 0, t_end = p.tokens;
  float* state = p.state;
  if (p.slots != nullptr) {
    const int32_t slot = p.slots[blockIdx.y];
    if (slot < 0 || slot >= p.num_slots) return;
    state += static_cast<int64_t>(slot) * p.channels * hist_len;
    t_begin = blockIdx.y, t_end = t_begin + 1;
  }
  float hist[kTaps], w[kTaps];
#pragma unroll
  for (int j = 0; j < kTaps; ++j) {
    hist[j] = j < hist_len ? state[c * hist_len + j] : 0.0f;
    w[j] = j < p.kernel ? p.weight[c * p.kernel + j] : 0.0f;
  }
  const float b = p.bias != nullptr ? p.bias[c] : 0.0f;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const float xt = to_f32(static_cast<const T*>(p.x)[t * p.channels + c]);
    float acc = b;
#pragma unroll
    for (int j = 0; j < kTaps - 1; ++j)
      if (j < hist_len) acc += w[j] * hist[j];
    acc += w[hist_len] * xt;
    if (p.silu) acc = acc / (1.0f + expf(-acc));
    static_cast<T*>(p.out)[t * p.channels + c] = from_f32<T>(acc);
#pragma unroll
    for (int j = 0; j < kTaps - 1; ++j)
      if (j < hist_len) hist[j] = j + 1 < hist_len ? hist[j + 1] : xt;
    if (p.intermediates != nullptr)
      for (int j = 0; j < hist_len; ++j) p.intermediates[(t * p.channels + c) * hist_len + j] = hist[j];
  }
#pragma unroll
  for (int j = 0; j < kTaps - 1; ++j)
    if (j < hist_len) state[c * hist_len + j] = hist[j];
}

template <typename T>
void launch(const ConvParams& p, dim3 blocks) {
  if (p.kernel <= kNarrowKernel) {
    causal_conv1d_kernel<T, kNarrowKernel><<<blocks, 128, 0, current_stream()>>>(p);
  } else {
    causal_conv1d_kernel<T, kMaxKernel><<<blocks, 128, 0, current_stream()>>>(p);
  }
}

}  // namespace

void causal_conv1d(const ops::CausalConv1dArgs& args) {
  const int64_t tokens = args.x.dim(0), channels = args.x.dim(1);
  const int kernel = static_cast<int>(args.weight.dim(1));
  if (tokens == 0) return;
  if (kernel < 1 || kernel > kMaxKernel)  // refused at model build (ops::check_causal_conv1d_supported)
    throw Error("causal_conv1d: kernel size " + std::to_string(kernel) + " is not supported on CUDA (1.." +
                std::to_string(kMaxKernel) + ")");
  STRATA_CHECK(args.weight.dtype() == DType::kF32 && args.conv_state.dtype() == DType::kF32);
  STRATA_CHECK(args.out.dtype() == args.x.dtype());
  const ConvParams p{.x = args.x.data(), .weight = args.weight.data_as<float>(),
                     .bias = args.bias.defined() ? args.bias.data_as<float>() : nullptr,
                     .state = args.conv_state.data_as<float>(), .out = args.out.data(),
                     .intermediates = args.intermediate_states.defined() ? args.intermediate_states.data_as<float>()
                                                                         : nullptr,
                     .slots = args.state_slots.defined() ? args.state_slots.data_as<int32_t>() : nullptr,
                     .num_slots = args.state_slots.defined() ? args.conv_state.dim(0) : 1,
                     .tokens = tokens, .channels = channels, .kernel = kernel, .silu = args.silu};
  if (p.slots != nullptr && tokens > 65535)  // rows <= max_num_seqs, which EngineOptions bounds
    throw Error("causal_conv1d: " + std::to_string(tokens) + " batched decode rows; at most 65535 per launch");
  const dim3 blocks(static_cast<unsigned>(ceil_div(channels, 128)), p.slots != nullptr ? static_cast<unsigned>(tokens) : 1u);
  if (args.x.dtype() == DType::kBF16) {
    launch<__nv_bfloat16>(p, blocks);
  } else if (args.x.dtype() == DType::kF32) {
    launch<float>(p, blocks);
  } else {
    unsupported_dtype("causal_conv1d", args.x.dtype());
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace strata::cuda
