// Scheduler: no prefill phase, no decode phase. Every running sequence is some tokens
// behind; each step hands out a token budget, running sequences first (decode rows), then
// waiting ones in (priority, arrival) order. When KV blocks or SSM slots run out it
// preempts the newest running sequence: its memory moves to host memory when the swap space
// has room (it resumes where it stopped), else it recomputes later (in chunks, whatever the
// chunked-prefill setting). A sequence that alone outgrows the pool is handed back to be
// finished ("length"), never preempted in favour of nobody.
#pragma once

#include <list>
#include <vector>

#include "strata/cache/sequence_memory.h"
#include "strata/engine/engine_options.h"
#include "strata/engine/sequence.h"

namespace strata {

struct ScheduledRow {
  Sequence* seq = nullptr;
  int32_t num_tokens = 0;        // including the drafts
  int32_t num_draft_tokens = 0;  // seq->draft_tokens verified after its one behind token
};

struct StepPlan {
  std::vector<ScheduledRow> rows;
  int32_t num_preempted = 0;
  std::vector<Sequence*> out_of_blocks;  // running alone, yet short of blocks: finish them
};

class Scheduler {
 public:
  // Blocks and slots come from `memory` (and its prefix cache, when started).
  Scheduler(const EngineOptions& options, SequenceMemory& memory);

  void add_waiting(Sequence* seq);
  // Adds a sequence that already holds its blocks and slot (a forked choice).
  void add_running(Sequence* seq);
  // Finished or cancelled: frees its blocks and slot and forgets it.
  void remove(Sequence* seq);
  // num_micro_batches_left > 1 (pipeline stages with micro-batches in flight): this step takes
  // its share of the sequences it may run, 1 / num_micro_batches_left of them, so the next
  // micro-batch has rows too. Sequences in a micro-batch in flight are left alone.
  StepPlan schedule(int32_t num_micro_batches_left = 1);

  int64_t num_running() const { return static_cast<int64_t>(running_.size()); }
  int64_t num_waiting() const { return static_cast<int64_t>(waiting_.size()); }
  const std::list<Sequence*>& running() const { return running_; }

 private:
  // Blocks covering num_computed + num_tokens tokens; false (nothing taken) if short.
  bool reserve_blocks(Sequence& seq, int32_t num_tokens);
  void free_resources(Sequence& seq);
  void preempt(Sequence& seq);
  // Preempts the newest running sequence other than `keep` (returning its planned tokens
  // to the budget); false if there is none.
  bool preempt_newest(const Sequence* keep, StepPlan& plan, int32_t& budget);
  bool any_in_micro_batch() const;
  // The rows this step may take: every sequence it could run, or its micro-batch's share.
  int32_t max_rows(int32_t num_micro_batches_left) const;
  void schedule_running(StepPlan& plan, int32_t& budget, int32_t max_rows);
  int32_t admit_tokens(const Sequence& seq, int32_t budget) const;
  // Starts a fresh (or recomputing) sequence from the longest cached prefix.
  void apply_prefix_match(Sequence& seq);
  // The tokens the head of the queue runs this step, its memory taken (swapped back in, or a
  // slot, a prefix match and blocks); 0: it waits, holding nothing new.
  int32_t admit(Sequence& seq, int32_t budget);
  // Takes an SSM slot (and a prefix-cache match) for a waiting sequence; false if no slot.
  bool prepare_admission(Sequence& seq);

  EngineOptions options_;
  SequenceMemory& memory_;
  std::list<Sequence*> running_;  // admission order
  std::list<Sequence*> waiting_;  // (priority, arrival_order) order
};

}  // namespace strata
