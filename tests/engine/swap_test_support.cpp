#include "engine/swap_test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include "engine/engine_test_support.h"
#include "strata/engine/model_runner.h"

namespace strata::test {
namespace {

// One sequence stepped by hand on a runner, its memory swapped out and back as the scheduler does.
struct HandSequence {
  std::vector<int32_t> block_table;
  int32_t ssm_slot = -1;
  int32_t num_computed = 0;
  std::optional<SwappedMemory> swapped;
};

Tensor step(ModelRunner& runner, HandSequence& seq, const std::vector<int32_t>& tokens) {
  SequenceMemory& memory = runner.memory();
  EXPECT_TRUE(memory.reserve(seq.block_table, seq.num_computed + static_cast<int64_t>(tokens.size())));
  if (memory.ssm() != nullptr && seq.ssm_slot < 0) seq.ssm_slot = *memory.acquire_slot();
  StepBatch batch({StepRow{.token_ids = tokens, .num_computed_tokens = seq.num_computed,
                           .block_table = seq.block_table, .ssm_slot = seq.ssm_slot}},
                  runner.block_size());
  seq.num_computed += static_cast<int32_t>(tokens.size());
  return runner.execute(batch);
}

// Prefills 41 tokens in chunks of 20, 20, 1, then decodes greedily; `between` runs after each
// of the given steps. Returns every step's logits.
std::vector<Tensor> run_by_hand(ModelRunner& runner, HandSequence& seq, const std::function<void(int)>& between) {
  const std::vector<int32_t> prompt = engine_prompt(3, 41);
  std::vector<std::vector<int32_t>> inputs = {{prompt.begin(), prompt.begin() + 20},
                                              {prompt.begin() + 20, prompt.begin() + 40}, {prompt.back()}};
  std::vector<Tensor> logits;
  for (int s = 0; s < 9; ++s) {
    if (s >= 3) {  // greedy: the argmax of the last logits
      const float* row = logits.back().data_as<const float>();
      inputs.push_back({static_cast<int32_t>(std::max_element(row, row + logits.back().dim(1)) - row)});
    }
    logits.push_back(step(runner, seq, inputs[s]));
    between(s);
  }
  return logits;
}

}  // namespace

void expect_swap_resumes_bit_for_bit(const Model& model, Backend& backend) {
  const RunnerOptions options{.num_kv_blocks = 8, .num_ssm_slots = 4};
  ModelRunner plain_runner(model, backend, options);
  HandSequence plain;
  const std::vector<Tensor> want = run_by_hand(plain_runner, plain, [](int) {});
  ModelRunner runner(model, backend, options);
  SequenceMemory& memory = runner.memory();
  memory.start_swap_space(int64_t{1} << 30);
  HandSequence seq;
  const std::vector<Tensor> got = run_by_hand(runner, seq, [&](int s) {
    if (s != 0 && s != 4) return;  // mid-prefill and mid-decode
    ASSERT_TRUE(memory.swap_out(seq.block_table, seq.num_computed, seq.ssm_slot, seq.swapped));
    EXPECT_TRUE(seq.block_table.empty());
    HandSequence other;  // overwrites the blocks and the slot the sequence had
    step(runner, other, engine_prompt(9, 8 * 16 - 1));
    memory.free(other.block_table, other.ssm_slot);
    ASSERT_TRUE(memory.swap_in(seq.swapped, seq.num_computed, seq.block_table, seq.ssm_slot));
    EXPECT_FALSE(seq.swapped.has_value());
  });
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s)
    EXPECT_EQ(std::memcmp(got[s].data(), want[s].data(), want[s].nbytes()), 0) << "step " << s;
  EXPECT_EQ(memory.swap_space()->counters().num_swapped_in, 2);
  EXPECT_EQ(memory.swap_space()->counters().bytes_held, 0);
  memory.free(seq.block_table, seq.ssm_slot);
  plain_runner.memory().free(plain.block_table, plain.ssm_slot);
}

}  // namespace strata::test
