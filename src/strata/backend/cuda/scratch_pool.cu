#include "strata/backend/cuda/scratch_pool.h"

#include <algorithm>

#include "strata/backend/cuda/cuda_check.h"
#include "strata/core/error.h"

namespace strata::cuda {
namespace {
thread_local ScratchPool* g_current_pool = nullptr;
}  // namespace

ScratchPool::~ScratchPool() {
  for (const Buffer& buffer : buffers_) cudaFree(buffer.current);
  for (void* old : outgrown_) cudaFree(old);
}

void* ScratchPool::get(ScratchUse use, int64_t bytes) {
  Buffer& buffer = buffers_[static_cast<size_t>(use)];
  if (bytes <= buffer.bytes) return buffer.current;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  STRATA_CUDA_CHECK(cudaStreamIsCapturing(current_stream(), &capture));
  STRATA_CHECK(capture == cudaStreamCaptureStatusNone);  // the runner warms shapes up first
  if (buffer.current != nullptr) outgrown_.push_back(buffer.current);
  const int64_t grown = std::max<int64_t>(bytes, 2 * buffer.bytes);
  buffer.current = nullptr;
  buffer.bytes = 0;
  STRATA_CUDA_CHECK(cudaMalloc(&buffer.current, static_cast<size_t>(grown)));
  buffer.bytes = grown;
  return buffer.current;
}

void set_current_scratch_pool(ScratchPool* pool) { g_current_pool = pool; }

void* scratch(ScratchUse use, int64_t bytes) {
  STRATA_CHECK_MSG(g_current_pool != nullptr, "no CUDA backend is current on this thread");
  return g_current_pool->get(use, bytes);
}

}  // namespace strata::cuda
