// How pipeline stages hand rows to each other: each stage shares a two-rank group with each
// neighbour in the ring 0 -> 1 -> ... -> last -> 0. A stage sends its last layer's output to the
// next stage; the last stage sends the logits back to stage 0, which holds the scheduler.
#pragma once

#include "strata/core/tensor.h"
#include "strata/model/workspace.h"
#include "strata/parallel/communicator.h"

namespace strata {

struct PipelineLinks {
  Communicator* from_previous = nullptr;  // this stage is its rank 1
  Communicator* to_next = nullptr;        // this stage is its rank 0
};

// Hands rows [n, ...] to rank 1 of `link` (this process is its rank 0). scratch: the gather's
// [2n, ...] buffer.
void send_rows(Communicator& link, const Tensor& rows, Workspace& scratch);
// Rank 1 of `link`: the rows (`dtype`, `shape`) that rank 0 sends, in `scratch`.
Tensor receive_rows(Communicator& link, DType dtype, Shape shape, Workspace& scratch);

}  // namespace strata
