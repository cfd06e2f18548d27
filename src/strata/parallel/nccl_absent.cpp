// Built only when the NCCL communicator is not (no CUDA, or CUDA without NCCL): the factory
// says what the build lacks.
#include "strata/core/error.h"
#include "strata/parallel/communicator.h"

namespace strata {

std::unique_ptr<Communicator> make_nccl_communicator(const CommunicatorOptions& options, Backend&) {
#if defined(STRATA_WITH_CUDA)
  fail("rank {} of group '{}' needs NCCL, but this build found none: install NCCL (libnccl-dev, or NCCL in the CUDA "
       "toolkit) and configure again",
       options.rank, options.group_name);
#else
  fail("rank {} of group '{}' needs NCCL, but this build has no CUDA: configure with -DSTRATA_CUDA=ON on a machine "
       "with the CUDA toolkit and NCCL",
       options.rank, options.group_name);
#endif
}

std::vector<uint8_t> make_nccl_unique_id() {
  fail("a multi-node start on GPUs needs NCCL, which this build lacks: configure with -DSTRATA_CUDA=ON on a machine "
       "with the CUDA toolkit and NCCL");
}

}  // namespace strata
