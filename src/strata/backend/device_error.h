// DeviceError: a device API call that failed (a CUDA error). Not sticky: that call failed but
// the device still works (an allocation, a launch configuration), so only the work that made
// it fails. Sticky: the device context is lost (an illegal address, a failed launch, an ECC
// error); nothing more runs on it until the process restarts.
#pragma once

#include <string>

#include "strata/core/error.h"

namespace strata {

class DeviceError : public Error {
 public:
  DeviceError(const std::string& message, bool sticky) : Error(message), sticky_(sticky) {}
  bool sticky() const { return sticky_; }

 private:
  bool sticky_;
};

}  // namespace strata
