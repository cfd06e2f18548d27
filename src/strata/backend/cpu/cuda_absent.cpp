// Built only when the CUDA backend is configured off: the factory reports no GPU.
#include "strata/backend/backend.h"

namespace strata {

std::unique_ptr<Backend> make_cuda_backend(int) { return nullptr; }
bool cuda_backend_compiled() { return false; }

}  // namespace strata
