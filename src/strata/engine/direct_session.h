// DirectSession: drives the ModelRunner step by step without a scheduler: the caller
// says which sequences run which tokens in each step. `strata logits`, the fixture tests
// and benchmarks use it; the serving engine uses the Scheduler instead. On hybrid models
// every sequence owns an SSM slot; snapshots, fork and verify rollback build on it.
#pragma once

#include <map>
#include <vector>

#include "strata/engine/model_runner.h"

namespace strata {

struct StepInput {
  int64_t seq_id = 0;
  std::vector<int32_t> token_ids;  // appended to the sequence this step
  LogitsMode logits = LogitsMode::kLast;
  // Hybrid models: also keep the SSM state after this many of this input's tokens (1..n) as a
  // snapshot of the sequence at that length, for fork(). 0: none.
  int32_t snapshot_after = 0;
  // A verify row: keep the SSM state after every token so rollback() can accept a prefix.
  bool verify = false;
  int32_t lora_slot = -1;  // the runner's LoRA adapter for this input's tokens; -1: none
};

class DirectSession {
 public:
  explicit DirectSession(ModelRunner& runner) : runner_(runner) {}
  ~DirectSession();

  // Throws strata::Error when a hybrid model's SSM slots are all taken. `images`: the prompt's
  // images (their placeholders' embeddings and MRoPE positions), null for text.
  int64_t add_sequence(std::shared_ptr<const MultimodalPrompt> images = nullptr);
  // Frees the sequence's KV blocks, SSM slot and snapshots.
  void release(int64_t seq_id);
  int32_t num_tokens(int64_t seq_id) const { return sequences_.at(seq_id).num_tokens; }

  // Runs all inputs as one StepBatch. Returns, per input, its logits [n, vocab] f32 host
  // (n = 1 for kLast, the input's token count for kAll, 0 for kNone).
  std::vector<Tensor> step(const std::vector<StepInput>& inputs);

  // A new sequence holding the first num_tokens tokens of seq_id: its full KV blocks shared,
  // a partial last block copied, and on hybrid models the SSM state of seq_id's snapshot at
  // num_tokens (or its live state when num_tokens is its length). Throws strata::Error when
  // there is no such state or no free slot or block.
  int64_t fork(int64_t seq_id, int32_t num_tokens);

  // After a step that ran a verify input of k tokens for seq_id: keep only the first
  // num_accepted (1..k) of them. KV entries past them are overwritten by later steps.
  void rollback(int64_t seq_id, int32_t num_accepted);

 private:
  struct SequenceState {
    int32_t num_tokens = 0;
    std::vector<int32_t> block_table;
    int32_t ssm_slot = -1;
    std::map<int32_t, int32_t> snapshots;  // sequence length -> SSM slot holding that state
    int32_t verify_base = -1;              // length before the last verify input; -1: none
    int32_t verify_len = 0;
    std::shared_ptr<const MultimodalPrompt> images;
  };
  void reserve_blocks(SequenceState& seq, int32_t num_tokens);
  int32_t allocate_ssm_slot();
  StepRow make_row(const StepInput& in, SequenceState& seq);
  void free_state(SequenceState& seq);

  ModelRunner& runner_;
  std::map<int64_t, SequenceState> sequences_;
  int64_t next_id_ = 0;
};

}  // namespace strata
