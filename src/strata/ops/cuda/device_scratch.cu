#include "strata/ops/cuda/device_scratch.h"

#include <algorithm>

#include "strata/ops/cuda/common.cuh"

namespace strata::cuda {

void* DeviceScratch::get(int64_t bytes) {
  if (bytes <= bytes_) return current_;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STRATA_CUDA_CHECK(cudaStreamIsCapturing(current_stream(), &capture));
  STRATA_CHECK(capture == cudaStreamCaptureStatusNone);  // the runner warms shapes up first
  if (current_ != nullptr) outgrown_.push_back(current_);
  const int64_t grown = std::max<int64_t>(bytes, 2 * bytes_);
  STRATA_CUDA_CHECK(cudaMalloc(&current_, static_cast<size_t>(grown)));
  bytes_ = grown;
  return current_;
}

}  // namespace strata::cuda
