// A hand-off is an all-gather over the two ranks of a link, which both communicators have and
// NCCL queues on the stream: the receiver keeps rank 0's rows and the sender drops the receiver's
// (the receiver sends its buffer's unread contents, in place).
#include "strata/model/pipeline_links.h"

#include "strata/core/error.h"

namespace strata {
namespace {

Shape doubled_rows(Shape shape) {
  shape[0] *= 2;
  return shape;
}

}  // namespace

void send_rows(Communicator& link, const Tensor& rows, Workspace& scratch) {
  STRATA_CHECK(link.world_size() == 2 && link.rank() == 0);
  const Tensor gathered = scratch.alloc(rows.dtype(), doubled_rows(rows.shape()));
  link.all_gather_rows(rows, gathered);
}

Tensor receive_rows(Communicator& link, DType dtype, Shape shape, Workspace& scratch) {
  STRATA_CHECK(link.world_size() == 2 && link.rank() == 1);
  const int64_t n = shape[0];
  const Tensor gathered = scratch.alloc(dtype, doubled_rows(shape));
  link.all_gather_rows(gathered.slice_rows(n, 2 * n), gathered);
  return gathered.slice_rows(0, n);
}

}  // namespace strata
