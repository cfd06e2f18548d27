// The end of a row-parallel projection (attention's o_proj, the MLP's down_proj under tensor
// parallelism): each rank computed a partial sum over its heads or columns; the sum over ranks
// is the sublayer's output.
#pragma once

#include "strata/model/forward_context.h"
#include "strata/model/layer.h"

namespace strata {

// partial: [T, hidden] this rank's share, summed over ctx.tensor_parallel in place, then stored
// into out or added to it (write).
void finish_row_parallel(const Tensor& partial, const Tensor& out, SublayerWrite write, ForwardContext& ctx);

// A row-parallel projection's bias enters the sum once: on rank 0.
Tensor bias_on_first_rank(const Tensor& bias, const ForwardContext& ctx);

}  // namespace strata
