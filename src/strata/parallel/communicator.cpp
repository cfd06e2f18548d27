#include "strata/parallel/communicator.h"

#include "strata/core/error.h"

namespace strata {

void Communicator::interrupt() {
  fail("this communicator (rank {} of {}) carries no control channel and cannot be interrupted; rank 0's messages go "
       "through shared memory or TCP", rank(), world_size());
}

}  // namespace strata
