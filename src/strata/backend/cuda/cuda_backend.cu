// The CUDA backend: device memory, one compute stream, copies through that stream, and
// stream capture into CUDA graphs.
#include <cuda_runtime.h>

#include <vector>

#include "strata/backend/backend.h"
#include "strata/backend/cuda/cuda_check.h"
#include "strata/backend/cuda/scratch_pool.h"
#include "strata/core/error.h"
#include "strata/weights/device_layout.h"

namespace strata {
namespace {

class CudaGraphWork final : public CapturedWork {
 public:
  CudaGraphWork(cudaGraphExec_t exec, cudaStream_t stream) : exec_(exec), stream_(stream) {}
  ~CudaGraphWork() override { cudaGraphExecDestroy(exec_); }
  void replay() override { STRATA_CUDA_CHECK(cudaGraphLaunch(exec_, stream_)); }

 private:
  cudaGraphExec_t exec_;
  cudaStream_t stream_;
};

class CudaEventMark final : public StreamMark {
 public:
  explicit CudaEventMark(cudaStream_t stream) {
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming));
    STRATA_CUDA_CHECK(cudaEventRecord(event_, stream));
  }
  ~CudaEventMark() override { cudaEventDestroy(event_); }
  void wait() override { STRATA_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device_index) : device_index_(device_index) {
    STRATA_CUDA_CHECK(cudaSetDevice(device_index));
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    cuda::set_current_stream(stream_);
    cuda::set_current_scratch_pool(&scratch_);
  }
  ~CudaBackend() override {
    if (cuda::current_stream() == stream_) {
      cuda::set_current_stream(nullptr);
      cuda::set_current_scratch_pool(nullptr);
    }
    cudaStreamSynchronize(stream_);  // nothing in flight reads the scratch freed next
    cudaStreamDestroy(stream_);
  }

  void make_current() override {
    STRATA_CUDA_CHECK(cudaSetDevice(device_index_));
    cuda::set_current_stream(stream_);
    cuda::set_current_scratch_pool(&scratch_);
  }

  Device device() const override { return Device{DeviceType::kCuda, device_index_}; }
  std::string name() const override { return "cuda"; }

  Tensor empty(DType dtype, Shape shape) override {
    const int64_t bytes = dtype_bytes(dtype, shape.numel());
    void* ptr = nullptr;
    STRATA_CUDA_CHECK(cudaMalloc(&ptr, static_cast<size_t>(bytes + 256)));
    std::shared_ptr<void> storage(ptr, [](void* p) { cudaFree(p); });
    return Tensor::with_storage(std::move(storage), ptr, dtype, shape, device());
  }

  Tensor pinned_host(DType dtype, Shape shape) override {
    void* ptr = nullptr;
    STRATA_CUDA_CHECK(cudaMallocHost(&ptr, static_cast<size_t>(dtype_bytes(dtype, shape.numel()) + 64)));
    std::shared_ptr<void> storage(ptr, [](void* p) { cudaFreeHost(p); });
    return Tensor::with_storage(std::move(storage), ptr, dtype, shape, Device{});
  }

  void copy(const Tensor& dst, const Tensor& src) override {
    STRATA_CHECK(dst.nbytes() == src.nbytes());
    if (has_device_layout(src.dtype()) && dst.device().is_cpu() != src.device().is_cpu())
      return copy_converting_layout(dst, src);
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDefault,
                                      stream_));
    if (dst.device().is_cpu()) STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Block-quantized rows change layout between host and device (weights/device_layout.h).
  void copy_converting_layout(const Tensor& dst, const Tensor& src) {
    const int64_t k = src.dim(src.rank() - 1), rows = src.numel() / k;
    std::vector<char> staging(static_cast<size_t>(src.nbytes()));
    if (dst.device().is_cpu()) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(staging.data(), src.data(), src.nbytes(), cudaMemcpyDefault, stream_));
      STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
      return from_device_layout(src.dtype(), staging.data(), rows, k, dst.data());
    }
    to_device_layout(src.dtype(), src.data(), rows, k, staging.data());
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst.data(), staging.data(), src.nbytes(), cudaMemcpyDefault, stream_));
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void copy_async(const Tensor& dst, const Tensor& src) override {
    STRATA_CHECK(dst.nbytes() == src.nbytes());
    STRATA_CHECK(!has_device_layout(src.dtype()) || dst.device().is_cpu() == src.device().is_cpu());
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.nbytes(), cudaMemcpyDefault, stream_));
  }

  std::unique_ptr<StreamMark> mark() override { return std::make_unique<CudaEventMark>(stream_); }

  void synchronize() override { STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  void fill_bytes(const Tensor& dst, uint8_t value) override {
    STRATA_CUDA_CHECK(cudaMemsetAsync(dst.data(), value, dst.nbytes(), stream_));
  }

  std::optional<DeviceMemory> memory() override {
    size_t free_bytes = 0, total_bytes = 0;
    STRATA_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    return DeviceMemory{static_cast<int64_t>(free_bytes), static_cast<int64_t>(total_bytes)};
  }

  std::unique_ptr<CapturedWork> capture(const std::function<void()>& body) override {
    STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
      body();
    } catch (...) {
      cudaStreamEndCapture(stream_, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    STRATA_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    cudaGraphExec_t exec = nullptr;
    STRATA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    STRATA_CUDA_CHECK(cudaGraphDestroy(graph));
    return std::make_unique<CudaGraphWork>(exec, stream_);
  }

 private:
  int device_index_;
  cudaStream_t stream_ = nullptr;
  cuda::ScratchPool scratch_;  // freed after the stream's work is done (the destructor syncs)
};

}  // namespace

namespace cuda {
namespace {
thread_local cudaStream_t g_current_stream = nullptr;
}
void set_current_stream(cudaStream_t stream) { g_current_stream = stream; }
cudaStream_t current_stream() { return g_current_stream; }
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend(int device_index) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= device_index) return nullptr;
  return std::make_unique<CudaBackend>(device_index);
}

bool cuda_backend_compiled() { return true; }

}  // namespace strata
