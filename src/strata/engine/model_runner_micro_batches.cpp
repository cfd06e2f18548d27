// ModelRunner's micro-batches under pipeline parallelism (declared in model_runner.h). Every round
// of the control channel reaches every rank, so while the later stages run a step they take no
// message: what rank 0 sends them meanwhile (memory changes, the next step and its stage-0 output)
// waits in deferred_, in rank 0's order, and goes out once that step's logits are back. Every
// stage thus runs steps and memory changes in the order rank 0 made them.
#include "strata/backend/device_error.h"
#include "strata/core/error.h"
#include "strata/engine/model_runner.h"
#include "strata/model/forward_context.h"
#include "strata/model/pipeline_links.h"

namespace strata {

// Under tensor parallelism a stage's other ranks run a step only once its message is through,
// which waits for the later stages: stage 0 could not run ahead of them.
int64_t ModelRunner::max_micro_batches() const {
  const bool stage_zero = options_.pipeline != nullptr && control() != nullptr && control()->rank() == 0;
  return stage_zero && options_.tensor_parallel == nullptr ? 2 : 1;
}

void ModelRunner::start_micro_batch(StepBatch& step) {
  STRATA_CHECK(max_micro_batches() > 1 && num_micro_batches() < max_micro_batches());
  backend_.make_current();
  check_group();
  if (!stages_busy_) send_lora_loads();
  send_to_other_ranks({.kind = RankMessage::Kind::kStep, .rows = step.rows(), .block_size = step.block_size(),
                       .min_blocks_per_row = step.max_blocks_per_row()});
  try {
    const Tensor out = run_eagerly(step, Tensor(), /*hold_stage_output=*/true);
    if (stages_busy_) {
      held_workspace_.reset();
      held_rows_ = held_workspace_.alloc(out.dtype(), out.shape());
      backend_.copy(held_rows_, out);
      deferred_.push_back(std::nullopt);
    } else {
      send_rows(*options_.pipeline->to_next, out, step_workspace_);
      stages_busy_ = true;
    }
    step_workspace_.reset();
  } catch (const std::exception& e) {
    lose_group(e);
  }
  started_.push_back({.num_logits = step.num_logits(), .num_tokens = step.num_tokens()});
}

Tensor ModelRunner::finish_micro_batch() {
  STRATA_CHECK(!started_.empty() && stages_busy_);
  backend_.make_current();
  check_group();
  const StartedStep oldest = started_.front();
  started_.pop_front();
  Tensor logits;
  try {
    ForwardContext ctx = forward_context(Tensor());
    logits = model_.receive_stage_output(oldest.num_logits, oldest.num_tokens, ctx);
    last_hidden_states_ = ctx.hidden_states;
    last_aux_hidden_states_ = ctx.aux_hidden_states;
  } catch (const std::exception& e) {
    lose_group(e);
  }
  stages_busy_ = false;
  send_deferred();  // the scratch of its hand-off comes after the logits in the step workspace
  Tensor host = backend_.to_host(logits);
  step_workspace_.reset();
  return host;
}

void ModelRunner::finish_micro_batches() {
  while (!started_.empty()) finish_micro_batch();
}

void ModelRunner::send_deferred() {
  send_lora_loads();
  while (!deferred_.empty() && !stages_busy_) {
    const std::optional<RankMessage> next = std::move(deferred_.front());
    deferred_.pop_front();
    if (next) {
      send_now(*next);
      continue;
    }
    try {
      send_rows(*options_.pipeline->to_next, held_rows_, step_workspace_);
    } catch (const std::exception& e) {
      lose_group(e);
    }
    held_rows_ = Tensor();
    stages_busy_ = true;
  }
}

}  // namespace strata
