#include "strata/backend/backend.h"

#include <cstring>

namespace strata {
namespace {

class DoneMark final : public StreamMark {
 public:
  void wait() override {}
};

}  // namespace

std::unique_ptr<StreamMark> Backend::mark() { return std::make_unique<DoneMark>(); }

Tensor Backend::to_host(const Tensor& src) {
  Tensor out = Tensor::host(src.dtype(), src.shape());
  if (src.device().is_cpu()) {
    std::memcpy(out.data(), src.data(), src.nbytes());
  } else {
    copy(out, src);
  }
  return out;
}

Tensor Backend::from_host(const Tensor& src) {
  Tensor out = empty(src.dtype(), src.shape());
  copy(out, src);
  return out;
}

}  // namespace strata
