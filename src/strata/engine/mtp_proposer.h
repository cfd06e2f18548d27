// MtpProposer: speculative decoding with a module fed the target's hidden states: the target
// checkpoint's multi-token-prediction (MTP) module, or an EAGLE-3 head, which reads the inputs of
// three target layers (ModelRunner::last_aux_hidden_states) where MTP reads the final-normed state,
// chains on its own pre-norm state and drafts in a vocabulary of its own (mapped by d2t). It
// drives the module's own ModelRunner (its KV blocks in that runner's SequenceMemory) and is the
// one owner of which sequence holds which of them. The module's entry at position t reads the
// target's hidden state at t and token t + 1, so it follows the target one step behind: each
// engine step, one batched forward feeds every running sequence the positions the target verified
// in its last step (their states read in place from the target runner) and gives each eligible
// sequence its first draft; k - 1 forwards chained on the module's own output state give the
// rest. Kept state only ever covers verified positions.
#pragma once

#include <list>
#include <span>
#include <unordered_map>
#include <vector>

#include "strata/engine/draft_model.h"
#include "strata/engine/model_runner.h"
#include "strata/engine/scheduler.h"
#include "strata/engine/sequence.h"

namespace strata {

class MtpProposer {
 public:
  // Makes both runners keep their steps' hidden states (the target's auxiliary ones for EAGLE-3).
  MtpProposer(ModelRunner& mtp_runner, ModelRunner& target_runner, int32_t num_speculative_tokens);
  ~MtpProposer();
  MtpProposer(const MtpProposer&) = delete;
  MtpProposer& operator=(const MtpProposer&) = delete;

  // The target ran `step` (rows as scheduled): its hidden states stay readable in the target
  // runner until its next step. A verify row counts its last known token; accept() adds the
  // drafts the target kept.
  void record_target_step(const StepBatch& step, std::span<const ScheduledRow> rows);
  // Sets seq->draft_tokens (and, for sampled requests, seq->draft_probs) of every request with
  // max_drafts > 0 whose module state reached its newest token this step.
  void propose(std::span<const DraftRequest> requests);
  // The target kept num_accepted of the sequence's drafts.
  void accept(const Sequence& seq, int32_t num_accepted);
  // Frees what a finished or preempted sequence holds in the module (no-op when nothing).
  void release(int64_t seq_id);
  // Frees the states of sequences that are not running (preempted since the last step).
  void release_except(const std::list<Sequence*>& running);

  ModelRunner& runner() { return runner_; }

 private:
  struct State {
    std::vector<int32_t> block_table;
    int32_t num_computed_tokens = 0;  // positions whose module KV holds the verified inputs
    // The target computed positions the module never saw (a prefix-cache hit, a forked choice,
    // a swap-in): without their states the module cannot follow, so the sequence gets no drafts.
    bool lost = false;
  };
  // The positions of one sequence the target computed in its last step.
  struct TargetRow {
    int32_t first_position = 0;
    int32_t hidden_row = 0;  // the first position's row in the target's hidden states
    int32_t num_positions = 0;
  };
  struct Proposal {
    Sequence* seq = nullptr;
    int32_t max_drafts = 0;
    int32_t next_position = 0;  // where the next chained guess is fed
    int32_t hidden_row = 0;     // its input state: a row of the module's last hidden states
  };
  // A forward's rows, and for each of their tokens the row of the hidden states it joins.
  struct Forward {
    std::vector<StepRow> rows;
    std::vector<int32_t> hidden_rows;
    std::vector<Proposal*> drafting;  // in the order of the rows with logits
  };

  void add_catch_up_row(const DraftRequest& request, Forward& forward, std::vector<Proposal>& proposals);
  void run_proposals(std::span<const DraftRequest> requests, std::vector<Proposal>& proposals);
  // Runs the forward on `source`'s rows and appends each drafting proposal's next draft.
  void run_and_draft(Forward forward, const Tensor& source);
  // [rows.size(), S * hidden] rows of source ([T, hidden], or [S, T, hidden] joined per row), in the
  // proposer's own buffer.
  Tensor gather_hidden(const Tensor& source, std::span<const int32_t> rows);
  // A logits row of the module over the target's vocabulary (an EAGLE-3 draft vocabulary mapped by
  // d2t, -inf elsewhere).
  std::span<const float> target_logits(std::span<const float> logits);
  // The target's states the module's entry at a verified position reads.
  const Tensor& target_states() const;
  void lose(State& state);
  void free_blocks(std::vector<int32_t>& block_table);
  void free_all();

  ModelRunner& runner_;
  ModelRunner& target_;
  SequenceMemory& memory_;
  int32_t num_speculative_tokens_;
  std::unordered_map<int64_t, State> states_;             // by sequence id
  std::unordered_map<int64_t, TargetRow> target_rows_;    // of the target's last step, by sequence id
  Tensor hidden_input_;  // [capacity, S * hidden] activation dtype: the module's hidden-state input
  std::vector<float> mapped_logits_;  // [target vocab]: target_logits' row
};

}  // namespace strata
