// DraftModel: the proposer of speculative decoding with a draft model. It drives its own
// ModelRunner (the draft's weights, and its KV blocks and SSM slots in that runner's
// SequenceMemory) and is the one owner of which sequence holds which of them. Each engine
// step: one batched forward catches every running sequence up on the tokens the draft has not
// seen (prompts alongside the target's chunks) and proposes each eligible sequence's first
// draft; k - 1 batched decode forwards propose the rest. The state the draft keeps is always
// that of verified tokens only: recurrent drafts guess on a copy of their SSM state.
#pragma once

#include <list>
#include <span>
#include <unordered_map>
#include <vector>

#include "strata/engine/model_runner.h"
#include "strata/engine/sequence.h"

namespace strata {

struct DraftRequest {
  Sequence* seq = nullptr;
  int32_t max_drafts = 0;  // 0: catch up on the prompt only
};

class DraftModel {
 public:
  // max_catch_up_tokens: the most tokens one catch-up forward feeds (the engine's step budget).
  DraftModel(ModelRunner& runner, int32_t num_speculative_tokens, int32_t max_catch_up_tokens);
  ~DraftModel();
  DraftModel(const DraftModel&) = delete;
  DraftModel& operator=(const DraftModel&) = delete;

  // Sets seq->draft_tokens (and, for sampled requests, seq->draft_probs) of every request
  // with max_drafts > 0 that the draft could catch up this step; the others get none.
  void propose(std::span<const DraftRequest> requests);
  // The target kept num_accepted of the sequence's drafts.
  void accept(const Sequence& seq, int32_t num_accepted);
  // Frees what a finished or preempted sequence holds in the draft (no-op when nothing).
  void release(int64_t seq_id);
  // Frees the states of sequences that are not running (preempted since the last step).
  void release_except(const std::list<Sequence*>& running);

  ModelRunner& runner() { return runner_; }
  int32_t num_speculative_tokens() const { return num_speculative_tokens_; }

 private:
  struct State {
    std::vector<int32_t> block_table;
    int32_t ssm_slot = -1;            // the state after num_computed_tokens (hybrid drafts)
    int32_t num_computed_tokens = 0;  // of the sequence's tokens, in the draft's KV and state
    int32_t num_fed_drafts = 0;       // guesses the last proposal fed (KV valid once accepted)
  };
  // A proposing sequence's per-step work: its slot for guesses and the drafts so far.
  struct Proposal {
    Sequence* seq = nullptr;
    int32_t max_drafts = 0;
    int32_t guess_slot = -1;      // a copy of the state the guesses advance (hybrid drafts)
    int32_t next_position = 0;    // where the next guess is fed
  };

  // The catch-up row of one sequence, or false when it gets none this step.
  bool add_catch_up_row(const DraftRequest& request, int32_t& budget, std::vector<StepRow>& rows,
                        std::vector<Proposal>& proposals);
  // The catch-up forward and the guessing ones; `proposals` holds the guess slots to free.
  void run_proposals(std::span<const DraftRequest> requests, std::vector<Proposal>& proposals);
  // Runs `rows`, then appends each proposal's next draft from its logits row.
  void run_and_draft(std::vector<StepRow> rows, std::vector<Proposal>& proposals);
  void free_state(State& state);

  ModelRunner& runner_;
  SequenceMemory& memory_;
  int32_t num_speculative_tokens_;
  int32_t max_catch_up_tokens_;
  std::unordered_map<int64_t, State> states_;  // by sequence id
};

}  // namespace strata
