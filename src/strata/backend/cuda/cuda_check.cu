#include "strata/backend/cuda/cuda_check.h"

#include <string>

namespace strata::cuda {

bool is_sticky_error(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoDevice:
    case cudaErrorCudartUnloading:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t error, const char* expr, const char* file, int line) {
  const bool sticky = is_sticky_error(error);
  // A call's failure is also the runtime's "last error"; cleared, so that the next launch
  // check does not report it again (a sticky one stays whatever we do).
  if (!sticky) cudaGetLastError();
  std::string message = std::string("CUDA error ") + cudaGetErrorName(error) + " (" + cudaGetErrorString(error) +
                        ") in " + expr + " at " + file + ":" + std::to_string(line);
  if (sticky) message += "; the GPU context is lost, the process must restart";
  throw DeviceError(message, sticky);
}

}  // namespace strata::cuda
