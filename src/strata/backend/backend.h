// Backend: owns device memory, copies and synchronisation for one device. Ops dispatch
// on the device of their tensors; the model never calls a backend kernel directly.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "strata/core/tensor.h"

namespace strata {

struct DeviceMemory {
  int64_t free_bytes = 0;
  int64_t total_bytes = 0;
};

// Work queued on a backend's stream, recorded once and replayed with the same addresses
// (a CUDA graph).
class CapturedWork {
 public:
  virtual ~CapturedWork() = default;
  virtual void replay() = 0;
};

// A point in a backend's queue of work; wait() blocks the host until everything queued
// before it has run (on the CPU, where work runs as it is queued, it returns at once).
class StreamMark {
 public:
  virtual ~StreamMark() = default;
  virtual void wait() = 0;
};

enum class CopyKind : uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;

  // A tensor in this backend's memory; contents undefined.
  virtual Tensor empty(DType dtype, Shape shape) = 0;
  // Host memory the device copies from and to without staging (page-locked on CUDA).
  virtual Tensor pinned_host(DType dtype, Shape shape) { return Tensor::host(dtype, shape); }
  // Copies between host and this device (or within it). Both sizes must match.
  virtual void copy(const Tensor& dst, const Tensor& src) = 0;
  // The same, queued without waiting: a copy to the host is complete only after a later
  // mark()'s wait(). Host memory on either side must stay untouched until then.
  virtual void copy_async(const Tensor& dst, const Tensor& src) { copy(dst, src); }
  // Marks the work queued so far (see StreamMark).
  virtual std::unique_ptr<StreamMark> mark();
  // Waits until all work queued on this backend has finished.
  virtual void synchronize() = 0;
  // Fills a tensor with a byte pattern (used to poison outputs in tests).
  virtual void fill_bytes(const Tensor& dst, uint8_t value) = 0;
  // Free and total bytes of device memory; nullopt where the backend cannot tell (CPU).
  virtual std::optional<DeviceMemory> memory() { return std::nullopt; }
  // Makes this backend's device and stream the ones that kernels launched from the calling
  // thread use (the backend's creator has them already; an engine thread needs this call).
  virtual void make_current() {}
  // Records the work `body` queues, without running it; nullptr where the backend cannot.
  virtual std::unique_ptr<CapturedWork> capture(const std::function<void()>& body) {
    (void)body;
    return nullptr;
  }

  // Copies a tensor to host memory (a new host tensor).
  Tensor to_host(const Tensor& src);
  // Copies a host tensor into this backend's memory (a new tensor).
  Tensor from_host(const Tensor& src);
};

std::unique_ptr<Backend> make_cpu_backend(int num_threads);
// nullptr when the build has no CUDA backend or no GPU is present.
std::unique_ptr<Backend> make_cuda_backend(int device_index);
bool cuda_backend_compiled();

}  // namespace strata
