// How an op front reaches its backend implementation: CPU tensors run the cpu:: kernel,
// CUDA tensors the cuda:: kernel. Without a CUDA build no CUDA tensor can exist.
#pragma once

#include <initializer_list>

#include "strata/core/error.h"
#include "strata/core/tensor.h"

#if defined(STRATA_WITH_CUDA)
#define STRATA_DISPATCH(device, cpu_call, cuda_call) \
  do {                                               \
    if ((device).is_cpu()) {                         \
      cpu_call;                                      \
    } else {                                         \
      cuda_call;                                     \
    }                                                \
  } while (0)
#else
#define STRATA_DISPATCH(device, cpu_call, cuda_call)                       \
  do {                                                                     \
    STRATA_CHECK_MSG((device).is_cpu(), "CUDA tensor in a CPU-only build"); \
    cpu_call;                                                              \
  } while (0)
#endif

namespace strata::ops {

// Shape checks shared by op fronts; failures are programming errors, not user input.
inline void expect_shape(const Tensor& t, const Shape& shape, const char* what) {
  STRATA_CHECK_MSG(t.shape() == shape, "{}: shape {} expected {}", what, t.shape().str(), shape.str());
}

// Activations of one op: one device and one dtype, f32 on the CPU, bf16 or f32 on CUDA.
inline void expect_activations(std::initializer_list<const Tensor*> tensors, const char* op) {
  const Tensor& first = **tensors.begin();
  STRATA_CHECK_MSG(first.dtype() == DType::kF32 || (!first.device().is_cpu() && first.dtype() == DType::kBF16),
                   "{} takes f32 activations (bf16 too on CUDA), got {}", op, dtype_name(first.dtype()));
  for (const Tensor* t : tensors)
    STRATA_CHECK_MSG(t->dtype() == first.dtype() && t->device() == first.device(),
                     "{}: activations of one dtype and device expected", op);
}

// f32 tensors (weights, gate logits, states) on `device`.
inline void expect_f32_on(Device device, std::initializer_list<const Tensor*> tensors, const char* op) {
  for (const Tensor* t : tensors)
    STRATA_CHECK_MSG(t->dtype() == DType::kF32 && t->device() == device, "{} takes f32 {} tensors here", op,
                     device.is_cpu() ? "host" : "device");
}

}  // namespace strata::ops
