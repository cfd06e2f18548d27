// Mamba-2's gated group norm when its groups span tensor-parallel ranks (one norm group over the
// whole intermediate, as HF Mamba2 and Nemotron-H with n_groups 1 have): each rank gathers every
// rank's columns, normalises whole rows as one rank would, and keeps its own columns.
#pragma once

#include "strata/model/forward_context.h"
#include "strata/ops/gated_rms_norm.h"

namespace strata {

// x, z: [T, L] this rank's columns (rank r holds [r * L, (r + 1) * L) of the whole row);
// weight: [world_size * L] f32, the whole norm's. x <- this rank's columns of
// gated_rms_norm(whole x, whole z, weight). Calls ctx.tensor_parallel's all_gather_rows twice.
void gated_norm_over_ranks(const Tensor& x, const Tensor& z, const Tensor& weight,
                           const ops::GatedRmsNormOptions& options, ForwardContext& ctx);

}  // namespace strata
