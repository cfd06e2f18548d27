// ModelRunner's micro-batches under pipeline parallelism (declared in model_runner.h). The later
// ranks take rank 0's messages as they come (ControlInbox), so rank 0 sends each step and memory
// change at once and every stage runs them in rank 0's order. Stage 0 hands a step's output on
// at once while fewer than one step per later stage is out; else it holds it until the oldest
// step's logits are back: a stage that waits to hand on rows then never waits on stage 0 in turn.
#include <algorithm>

#include "strata/backend/device_error.h"
#include "strata/core/error.h"
#include "strata/engine/model_runner.h"
#include "strata/model/forward_context.h"
#include "strata/model/pipeline_links.h"

namespace strata {

bool ModelRunner::is_first_stage() const {
  return options_.pipeline != nullptr && model_.pipeline_stage().is_first() && model_.pipeline_stage().count > 1;
}

int64_t ModelRunner::max_micro_batches() const {
  const bool rank_zero = is_first_stage() && control() != nullptr && control()->rank() == 0;
  return rank_zero ? model_.pipeline_stage().count : 1;
}

void ModelRunner::start_micro_batch(StepBatch& step) {
  const int64_t num_stages = model_.pipeline_stage().count;
  STRATA_CHECK(is_first_stage() && num_micro_batches() < num_stages && !held_rows_.defined());
  backend_.make_current();
  check_group();
  if (has_lora_loads() && !started_.empty()) receive_all();  // the ranks agree on a load between steps
  send_lora_loads();
  send_to_other_ranks({.kind = RankMessage::Kind::kStep, .rows = step.rows(), .block_size = step.block_size(),
                       .min_blocks_per_row = step.max_blocks_per_row(), .micro_batch = true});
  try {
    const Tensor out = run_eagerly(step, Tensor(), /*hold_stage_output=*/true);
    if (num_handed_on_ < num_stages - 1) {
      send_rows(*options_.pipeline->to_next, out, step_workspace_);
      ++num_handed_on_;
    } else {
      held_workspace_.reset();
      held_rows_ = held_workspace_.alloc(out.dtype(), out.shape());
      backend_.copy(held_rows_, out);
    }
    step_workspace_.reset();
  } catch (const std::exception& e) {
    lose_group(e);
  }
  started_.push_back({.num_logits = step.num_logits(), .num_tokens = step.num_tokens()});
}

Tensor ModelRunner::finish_micro_batch() {
  STRATA_CHECK(!started_.empty());
  if (!started_.front().logits.defined()) receive_next();
  Tensor logits = std::move(started_.front().logits);
  started_.pop_front();
  return logits;
}

void ModelRunner::finish_micro_batches() {
  while (!started_.empty()) finish_micro_batch();
}

void ModelRunner::receive_all() {
  while (!started_.back().logits.defined()) receive_next();
}

void ModelRunner::receive_next() {
  backend_.make_current();
  check_group();
  // Stage 0's other tensor-parallel ranks take their logits from the last stage at this point too.
  if (options_.tensor_parallel != nullptr) send_to_other_ranks({.kind = RankMessage::Kind::kFinishMicroBatch});
  auto next = std::find_if(started_.begin(), started_.end(), [](const StartedStep& s) { return !s.logits.defined(); });
  STRATA_CHECK(next != started_.end() && num_handed_on_ > 0);
  try {
    ForwardContext ctx = forward_context(Tensor());
    const Tensor logits = model_.receive_stage_output(next->num_logits, next->num_tokens, ctx);
    last_hidden_states_ = ctx.hidden_states;
    last_aux_hidden_states_ = ctx.aux_hidden_states;
    --num_handed_on_;
    if (held_rows_.defined()) {  // its scratch comes after the logits in the step workspace
      send_rows(*options_.pipeline->to_next, held_rows_, step_workspace_);
      held_rows_ = Tensor();
      ++num_handed_on_;
    }
    next->logits = backend_.to_host(logits);
  } catch (const std::exception& e) {
    lose_group(e);
  }
  step_workspace_.reset();
}

}  // namespace strata
