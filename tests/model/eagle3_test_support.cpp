#include "model/eagle3_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

namespace strata::test {
namespace {

// [S, T, hidden] host states -> [n, S * hidden] (row t: the S states of position t, in layer order).
Tensor joined_rows(const Tensor& aux, int64_t n) {
  const int64_t parts = aux.dim(0), t = aux.dim(1), width = aux.dim(2);
  Tensor out = Tensor::host(aux.dtype(), {n, parts * width});
  const int64_t row_bytes = aux.nbytes() / (parts * t);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < parts; ++j)
      std::memcpy(static_cast<char*>(out.data()) + (i * parts + j) * row_bytes,
                  static_cast<const char*>(aux.data()) + (j * t + i) * row_bytes, row_bytes);
  return out;
}

}  // namespace

Eagle3Harness::Eagle3Harness(const Model& target, const Model& head, Backend& backend)
    : head_(head), backend_(backend),
      target_runner_(target, backend, {.num_kv_blocks = 32, .aux_hidden_layers = head.parts().eagle3.target_layers}),
      head_runner_(head, backend, {.num_kv_blocks = 32, .keep_hidden_states = true}) {}

Eagle3Harness::~Eagle3Harness() {
  int32_t no_slot = -1;
  target_runner_.memory().free(target_blocks_, no_slot);
  head_runner_.memory().free(head_blocks_, no_slot);
}

Tensor Eagle3Harness::catch_up(const std::vector<int32_t>& tokens) {
  const int32_t n = static_cast<int32_t>(tokens.size()) - 1;
  EXPECT_TRUE(target_runner_.memory().reserve(target_blocks_, n + 1));
  StepBatch step({{.seq_id = 0, .token_ids = tokens, .block_table = target_blocks_, .logits = LogitsMode::kLast}},
                 target_runner_.block_size());
  target_runner_.execute(step);
  return catch_up_on(tokens, joined_rows(backend_.to_host(target_runner_.last_aux_hidden_states()), n));
}

Tensor Eagle3Harness::catch_up_on(const std::vector<int32_t>& tokens, const Tensor& aux) {
  const int32_t n = static_cast<int32_t>(tokens.size()) - 1;
  EXPECT_TRUE(head_runner_.memory().reserve(head_blocks_, n + 8));
  StepBatch head_step({{.seq_id = 0, .token_ids = {tokens.begin() + 1, tokens.end()}, .block_table = head_blocks_,
                        .logits = LogitsMode::kAll}}, head_runner_.block_size());
  head_step.set_input_hidden_states(backend_.device().is_cpu() ? aux : backend_.from_host(aux));
  Tensor logits = head_runner_.execute(head_step);
  last_state_ = backend_.to_host(head_runner_.last_hidden_states().slice_rows(n - 1, n));
  next_position_ = n;
  return logits;
}

Tensor Eagle3Harness::chain(int32_t token) {
  StepBatch step({{.seq_id = 0, .token_ids = {token}, .num_computed_tokens = next_position_,
                   .block_table = head_blocks_, .logits = LogitsMode::kLast}}, head_runner_.block_size());
  step.set_input_hidden_states(backend_.device().is_cpu() ? last_state_ : backend_.from_host(last_state_));
  Tensor logits = head_runner_.execute(step);
  last_state_ = backend_.to_host(head_runner_.last_hidden_states());
  ++next_position_;
  return logits.reshape({logits.dim(1)});
}

int32_t Eagle3Harness::draft_token(const float* logits_row) const {
  const std::vector<int32_t>& d2t = head_.parts().eagle3.draft_to_target;
  const auto draft = static_cast<int32_t>(std::max_element(logits_row, logits_row + d2t.size()) - logits_row);
  return draft + d2t[draft];
}

}  // namespace strata::test
