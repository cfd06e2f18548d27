#include "strata/model/layers/ssm_segments.h"

#include "strata/cache/ssm_state_pool.h"
#include "strata/cache/verify_state_buffers.h"
#include "strata/core/error.h"

namespace strata {
namespace {

Tensor rows_view(float* base, int64_t first, int64_t count, int64_t elems) {
  return Tensor::view(base + first * elems, DType::kF32, {count, elems});
}

}  // namespace

void for_each_ssm_segment(const StepBatch& step, ForwardContext& ctx,
                          const std::function<void(const SsmSegment&)>& run) {
  STRATA_CHECK_MSG(ctx.ssm_pool != nullptr && ctx.ssm_layer >= 0, "recurrent layer without SSM pool");
  SsmStatePool& pool = *ctx.ssm_pool;
  STRATA_CHECK(pool.h_state_dtype() == SsmStateDType::kF32);
  const int layer = static_cast<int>(ctx.ssm_layer);
  const SsmLayerShape& shape = pool.layer_shape(layer);
  for (int64_t r = 0; r < step.num_rows(); ++r) {
    const StepRow& row = step.rows()[r];
    const int32_t q = row.q_len();
    VerifyStateBuffer* verify = nullptr;
    if (row.keep_intermediates) {
      STRATA_CHECK(ctx.verify_states != nullptr && q <= ctx.verify_states->max_tokens());
      verify = &ctx.verify_states->for_slot(row.ssm_slot);
    }
    const bool snapshot = row.ssm_snapshot_after > 0 && row.ssm_snapshot_after <= q;
    const int32_t cut = snapshot ? row.ssm_snapshot_after : q;
    const int32_t bounds[3] = {0, cut, q};
    for (int piece = 0; piece < 2; ++piece) {
      const int32_t p0 = bounds[piece], p1 = bounds[piece + 1];
      if (p1 > p0) {
        SsmSegment s{.begin = step.row_start(r) + p0, .end = step.row_start(r) + p1,
                     .h_state = Tensor::view(pool.h_state(layer, row.ssm_slot), DType::kF32,
                                             {shape.h_state_elems}),
                     .conv_state = Tensor::view(pool.conv_state(layer, row.ssm_slot), DType::kF32,
                                                {shape.conv_state_elems})};
        if (verify != nullptr) {
          s.h_intermediates = rows_view(verify->h_states(layer), p0, p1 - p0, shape.h_state_elems);
          s.conv_intermediates =
              rows_view(verify->conv_states(layer), p0, p1 - p0, shape.conv_state_elems);
        }
        run(s);
      }
      if (snapshot && piece == 0) pool.copy_layer(layer, row.ssm_slot, row.ssm_snapshot_slot);
    }
    if (verify != nullptr) verify->set_num_tokens(q);
  }
}

}  // namespace strata
