// The CPU backend: host memory, synchronous execution; kernels parallelise internally.
#include <cstring>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int num_threads) { set_num_threads(num_threads); }
  Device device() const override { return Device{}; }
  std::string name() const override { return "cpu"; }
  Tensor empty(DType dtype, Shape shape) override { return Tensor::host(dtype, shape); }
  void copy(const Tensor& dst, const Tensor& src) override {
    STRATA_CHECK(dst.nbytes() == src.nbytes());
    std::memcpy(dst.data(), src.data(), src.nbytes());
  }
  void synchronize() override {}
  void fill_bytes(const Tensor& dst, uint8_t value) override {
    std::memset(dst.data(), value, dst.nbytes());
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int num_threads) {
  return std::make_unique<CpuBackend>(num_threads);
}

}  // namespace strata
