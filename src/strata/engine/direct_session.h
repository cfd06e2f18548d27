// DirectSession: drives the ModelRunner step by step without a scheduler: the caller
// says which sequences run which tokens in each step. `strata logits`, the fixture tests
// and benchmarks use it; the serving engine uses the Scheduler instead.
#pragma once

#include <map>
#include <vector>

#include "strata/engine/model_runner.h"

namespace strata {

struct StepInput {
  int64_t seq_id = 0;
  std::vector<int32_t> token_ids;  // appended to the sequence this step
  LogitsMode logits = LogitsMode::kLast;
};

class DirectSession {
 public:
  explicit DirectSession(ModelRunner& runner) : runner_(runner) {}
  ~DirectSession();

  int64_t add_sequence();
  void release(int64_t seq_id);
  int32_t num_tokens(int64_t seq_id) const { return sequences_.at(seq_id).num_tokens; }

  // Runs all inputs as one StepBatch. Returns, per input, its logits [n, vocab] f32 host
  // (n = 1 for kLast, the input's token count for kAll, 0 for kNone).
  std::vector<Tensor> step(const std::vector<StepInput>& inputs);

 private:
  struct SequenceState {
    int32_t num_tokens = 0;
    std::vector<int32_t> block_table;
  };
  void reserve_blocks(SequenceState& seq, int32_t num_tokens);

  ModelRunner& runner_;
  std::map<int64_t, SequenceState> sequences_;
  int64_t next_id_ = 0;
};

}  // namespace strata
