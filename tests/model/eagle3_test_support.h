// Runs an EAGLE-3 head beside its target outside the engine, as MtpProposer feeds it: the target
// over a whole sequence keeping its auxiliary layers' states, then the head over positions
// [0, T - 1) (entry t reads the target's states at t and token t + 1), then chained steps on the
// head's own pre-norm state. Shared by the head's logits test and the speculation tests.
#pragma once

#include <vector>

#include "strata/engine/model_runner.h"

namespace strata::test {

class Eagle3Harness {
 public:
  Eagle3Harness(const Model& target, const Model& head, Backend& backend);
  ~Eagle3Harness();

  // The head's logits [T - 1, draft vocab] f32 on the host over `tokens`.
  Tensor catch_up(const std::vector<int32_t>& tokens);
  // The same on given target states: aux [T - 1, 3 * target hidden] host, the activation dtype.
  Tensor catch_up_on(const std::vector<int32_t>& tokens, const Tensor& aux);
  // One chained step after catch_up: `token` (a target id) at the next position on the head's
  // last state; its logits [draft vocab] f32 on the host.
  Tensor chain(int32_t token);
  // The target id of a row's argmax (the draft the head proposes for a greedy request).
  int32_t draft_token(const float* logits_row) const;

 private:
  const Model& head_;
  Backend& backend_;
  ModelRunner target_runner_, head_runner_;
  std::vector<int32_t> target_blocks_, head_blocks_;
  int32_t next_position_ = 0;
  Tensor last_state_;  // [1, hidden] host: the head's pre-norm state of its last position
};

}  // namespace strata::test
