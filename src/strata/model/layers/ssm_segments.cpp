#include "strata/model/layers/ssm_segments.h"

#include "strata/cache/ssm_state_pool.h"
#include "strata/cache/verify_state_buffers.h"
#include "strata/core/error.h"

#include <utility>
#include <vector>

namespace strata {
namespace {

Tensor rows_view(const Tensor& rows, int64_t first, int64_t count, int64_t elems) {
  return rows.slice_rows(first, first + count).reshape({count, elems});
}

// The f32 view of a slot's h_state that the kernels update, on the pool's device. An f16 pool
// (host only) is widened into scratch for the segment and narrowed back when the lease ends.
class F32HState {
 public:
  F32HState(SsmStatePool& pool, int layer, int32_t slot) : pool_(pool), layer_(layer), slot_(slot) {
    const int64_t elems = pool.layer_shape(layer).h_state_elems;
    if (pool.h_state_dtype() == SsmStateDType::kF32) {
      view_ = Tensor::view(pool.h_state(layer, slot), DType::kF32, {elems}, pool.device());
    } else {
      scratch_.resize(elems);
      pool.load_h_state(layer, slot, scratch_.data());
      view_ = Tensor::view(scratch_.data(), DType::kF32, {elems});
    }
  }
  ~F32HState() {
    if (!scratch_.empty()) pool_.store_h_state(layer_, slot_, scratch_.data());
  }
  const Tensor& view() const { return view_; }

 private:
  SsmStatePool& pool_;
  int layer_;
  int32_t slot_;
  std::vector<float> scratch_;
  Tensor view_;
};

Tensor per_slot_view(const Tensor& state, bool batched, const Shape& per_slot) {
  if (!batched) return state.reshape(per_slot);
  Shape shape;
  shape.rank = per_slot.rank + 1;
  shape.dims[0] = state.dim(0);
  for (int i = 0; i < per_slot.rank; ++i) shape.dims[i + 1] = per_slot.dims[i];
  return state.reshape(shape);
}

}  // namespace

Tensor SsmSegment::h_state_as(const Shape& per_slot) const {
  return per_slot_view(h_state, state_slots.defined(), per_slot);
}

Tensor SsmSegment::conv_state_as(const Shape& per_slot) const {
  return per_slot_view(conv_state, state_slots.defined(), per_slot);
}

void for_each_ssm_segment(const StepBatch& step, ForwardContext& ctx, int64_t pool_layer,
                          const std::function<void(const SsmSegment&)>& run) {
  STRATA_CHECK_MSG(ctx.ssm_pool != nullptr && pool_layer >= 0, "recurrent layer without SSM pool");
  SsmStatePool& pool = *ctx.ssm_pool;
  const int layer = static_cast<int>(pool_layer);
  const SsmLayerShape& shape = pool.layer_shape(layer);
  if (step.is_plain_ssm_decode() && step.num_rows() > 0 && pool.h_state_dtype() == SsmStateDType::kF32) {
    STRATA_CHECK_MSG(step.device().ssm_slots.defined(), "plain SSM decode step without uploaded slots");
    run({.begin = 0, .end = step.num_tokens(), .h_state = pool.h_states(layer),
         .conv_state = pool.conv_states(layer), .state_slots = step.device().ssm_slots});
    return;
  }
  for (int64_t r = 0; r < step.num_rows(); ++r) {
    const StepRow& row = step.rows()[r];
    const int32_t q = row.q_len();
    VerifyStateBuffer* verify = nullptr;
    if (row.keep_intermediates) {
      STRATA_CHECK(ctx.verify_states != nullptr && q <= ctx.verify_states->max_tokens());
      verify = &ctx.verify_states->for_slot(row.ssm_slot);
    }
    // Segments end at each snapshot point and at the row's end.
    std::vector<std::pair<int32_t, int32_t>> cuts;  // (token count, snapshot slot or -1)
    for (const SsmSnapshotRequest& snap : row.ssm_snapshots)
      if (snap.after_tokens > 0 && snap.after_tokens <= q) cuts.push_back({snap.after_tokens, snap.slot});
    cuts.push_back({q, -1});
    int32_t p0 = 0;
    for (const auto& [p1, snapshot_slot] : cuts) {
      if (p1 > p0) {
        const F32HState h_state(pool, layer, row.ssm_slot);
        SsmSegment s{.begin = step.row_start(r) + p0, .end = step.row_start(r) + p1,
                     .h_state = h_state.view(),
                     .conv_state = Tensor::view(pool.conv_state(layer, row.ssm_slot), DType::kF32,
                                                {shape.conv_state_elems}, pool.device())};
        if (verify != nullptr) {
          s.h_intermediates = rows_view(verify->h_state_rows(layer), p0, p1 - p0, shape.h_state_elems);
          s.conv_intermediates =
              rows_view(verify->conv_state_rows(layer), p0, p1 - p0, shape.conv_state_elems);
        }
        run(s);
        p0 = p1;
      }
      if (snapshot_slot >= 0) pool.copy_layer(layer, row.ssm_slot, snapshot_slot);
    }
    if (verify != nullptr) verify->set_num_tokens(q);
  }
}

}  // namespace strata
