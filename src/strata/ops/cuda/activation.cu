// CUDA activations: out = act(gate) * up (gated) or act(x), f32 math on bf16 or f32 storage.
// Elementwise with a grid-stride loop; out may alias gate or up.
#include "strata/ops/activation.h"
#include "strata/ops/cuda/activation.cuh"
#include "strata/ops/cuda/common.cuh"
#include "strata/ops/cuda/pdl.cuh"

namespace strata::cuda {
namespace {

struct ActivationParams {
  const void* gate;  // [N] or, with cols > 0, [N / cols, 2 * cols] (gate | up)
  const void* up;    // [N] or null
  void* out;         // [N]
  int64_t n;
  int64_t cols = 0;  // > 0: gate and up are the halves of each row of `gate`
};

template <typename T, ops::Activation kAct>
__global__ void activation_kernel(ActivationParams p) {
  allow_next_kernel();  // the next kernel may get resident and fetch its weights
  wait_for_previous_kernel();
  const T* gate = static_cast<const T*>(p.gate);
  const T* up = static_cast<const T*>(p.up);
  T* out = static_cast<T*>(p.out);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (p.cols > 0) {
      const T* row = gate + (i / p.cols) * 2 * p.cols + i % p.cols;
      out[i] = from_f32<T>(gated_value<kAct>(to_f32(row[0]), to_f32(row[p.cols])));
      continue;
    }
    const float v = apply_activation<kAct>(to_f32(gate[i]));
    out[i] = from_f32<T>(up != nullptr ? v * up_factor<kAct>(to_f32(up[i])) : v);
  }
}

template <typename T>
void launch_for_dtype(const ActivationParams& p, ops::Activation act) {
  const unsigned blocks = grid_for(p.n, 256);
  const cudaStream_t stream = current_stream();
  switch (act) {
    case ops::Activation::kSilu:
      launch_dependent(activation_kernel<T, ops::Activation::kSilu>, dim3(blocks), dim3(256), 0, stream, p);
      break;
    case ops::Activation::kGeluTanh:
      launch_dependent(activation_kernel<T, ops::Activation::kGeluTanh>, dim3(blocks), dim3(256), 0, stream, p);
      break;
    case ops::Activation::kGelu:
      launch_dependent(activation_kernel<T, ops::Activation::kGelu>, dim3(blocks), dim3(256), 0, stream, p);
      break;
    case ops::Activation::kRelu2:
      launch_dependent(activation_kernel<T, ops::Activation::kRelu2>, dim3(blocks), dim3(256), 0, stream, p);
      break;
    case ops::Activation::kClampedSwiglu:
      launch_dependent(activation_kernel<T, ops::Activation::kClampedSwiglu>, dim3(blocks), dim3(256), 0, stream, p);
      break;
    case ops::Activation::kTanh:
      launch_dependent(activation_kernel<T, ops::Activation::kTanh>, dim3(blocks), dim3(256), 0, stream, p);
      break;
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

}  // namespace

void gated_activation(const Tensor& gate, const Tensor* up, const Tensor& out, ops::Activation act) {
  if (gate.numel() == 0) return;
  STRATA_CHECK(out.dtype() == gate.dtype() && (up == nullptr || up->dtype() == gate.dtype()));
  const ActivationParams p{.gate = gate.data(), .up = up != nullptr ? up->data() : nullptr,
                           .out = out.data(), .n = gate.numel()};
  if (gate.dtype() == DType::kBF16) {
    launch_for_dtype<__nv_bfloat16>(p, act);
  } else if (gate.dtype() == DType::kF32) {
    launch_for_dtype<float>(p, act);
  } else {
    unsupported_dtype("activation", gate.dtype());
  }
}

void gated_activation_halves(const Tensor& gate_up, const Tensor& out, ops::Activation act) {
  if (out.numel() == 0) return;
  STRATA_CHECK(out.dtype() == gate_up.dtype());
  const ActivationParams p{.gate = gate_up.data(), .up = nullptr, .out = out.data(), .n = out.numel(),
                           .cols = out.dim(1)};
  if (out.dtype() == DType::kBF16) {
    launch_for_dtype<__nv_bfloat16>(p, act);
  } else if (out.dtype() == DType::kF32) {
    launch_for_dtype<float>(p, act);
  } else {
    unsupported_dtype("activation", out.dtype());
  }
}

}  // namespace strata::cuda
