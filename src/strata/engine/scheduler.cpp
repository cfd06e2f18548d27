#include "strata/engine/scheduler.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

Scheduler::Scheduler(const EngineOptions& options, SequenceMemory& memory) : options_(options), memory_(memory) {}

void Scheduler::add_waiting(Sequence* seq) {
  seq->status = SequenceStatus::kWaiting;
  auto it = std::find_if(waiting_.begin(), waiting_.end(), [&](const Sequence* other) {
    return std::pair(seq->priority(), seq->arrival_order) < std::pair(other->priority(), other->arrival_order);
  });
  waiting_.insert(it, seq);
}

void Scheduler::add_running(Sequence* seq) {
  seq->status = SequenceStatus::kRunning;
  running_.push_back(seq);
}

void Scheduler::remove(Sequence* seq) {
  running_.remove(seq);
  waiting_.remove(seq);
  free_resources(*seq);
  seq->status = SequenceStatus::kFinished;
}

void Scheduler::free_resources(Sequence& seq) {
  memory_.free(seq.block_table, seq.ssm_slot);
  memory_.free_swapped(seq.swapped);
  seq.num_registered_blocks = 0;
}

bool Scheduler::reserve_blocks(Sequence& seq, int32_t num_tokens) {
  return memory_.reserve(seq.block_table, seq.num_computed_tokens + num_tokens);
}

// Swapped out when host memory has room (it resumes where it stopped), else recomputed.
void Scheduler::preempt(Sequence& seq) {
  const bool swapped = seq.num_computed_tokens > 0 &&
                       memory_.swap_out(seq.block_table, seq.num_computed_tokens, seq.ssm_slot, seq.swapped);
  if (!swapped) {
    free_resources(seq);
    seq.num_computed_tokens = 0;
  }
  seq.num_registered_blocks = 0;  // its blocks come back under new ids
  running_.remove(&seq);
  add_waiting(&seq);
}

bool Scheduler::preempt_newest(const Sequence* keep, StepPlan& plan, int32_t& budget) {
  Sequence* newest = nullptr;
  for (Sequence* seq : running_)
    if (seq != keep && !seq->in_micro_batch && (newest == nullptr || seq->arrival_order > newest->arrival_order)) newest = seq;
  if (newest == nullptr) return false;
  for (auto it = plan.rows.begin(); it != plan.rows.end(); ++it)
    if (it->seq == newest) {
      budget += it->num_tokens;
      plan.rows.erase(it);
      break;
    }
  preempt(*newest);
  ++plan.num_preempted;
  return true;
}

int32_t Scheduler::admit_tokens(const Sequence& seq, int32_t budget) const {
  if (seq.awaiting_last_token) return 0;  // its pending token finishes it: nothing to feed
  const int32_t behind = seq.num_tokens_behind();
  if (behind <= budget) return behind;
  // A prompt fits one step without chunked prefill (Engine::submit checks); a preempted
  // sequence's prompt and output may not, so it recomputes in chunks.
  return options_.enable_chunked_prefill || seq.num_output_tokens() > 0 ? budget : 0;
}

int32_t Scheduler::admit(Sequence& seq, int32_t budget) {
  // A preempted sequence goes on from its tokens: wait until the pending one is back.
  if (seq.num_pending_tokens > 0) return 0;
  if (seq.swapped) {
    const int32_t num_tokens = admit_tokens(seq, budget);
    const bool back = num_tokens > 0 && memory_.swap_in(seq.swapped, seq.num_computed_tokens + num_tokens,
                                                        seq.block_table, seq.ssm_slot);
    return back ? num_tokens : 0;
  }
  if (!prepare_admission(seq)) return 0;
  const int32_t num_tokens = admit_tokens(seq, budget);
  if (num_tokens == 0 || !reserve_blocks(seq, num_tokens)) {
    free_resources(seq);
    seq.num_computed_tokens = 0;
    return 0;
  }
  return num_tokens;
}

bool Scheduler::prepare_admission(Sequence& seq) {
  if (memory_.ssm() != nullptr && seq.ssm_slot < 0) {
    const std::optional<int32_t> slot = memory_.acquire_slot();
    if (!slot) return false;
    seq.ssm_slot = *slot;
  }
  if (memory_.prefix_cache() != nullptr && seq.num_computed_tokens == 0 && seq.block_table.empty() &&
      seq.request->request.prompt_logprobs < 0 && !seq.request->pools_every_position)
    apply_prefix_match(seq);
  return true;
}

void Scheduler::apply_prefix_match(Sequence& seq) {
  const PrefixMatch match =
      memory_.match_prefix(seq.token_ids, seq.request->request.cache_key, seq.block_hashes, seq.ssm_slot);
  seq.block_table = match.blocks;
  seq.num_computed_tokens = match.num_tokens;
  seq.num_registered_blocks = static_cast<int32_t>(match.blocks.size());
  seq.last_match_tokens = match.num_tokens;
  // Hybrid models: the state where this prompt leaves the cached chain is worth keeping.
  const bool branches = memory_.ssm() != nullptr && match.num_block_tokens > match.num_tokens;
  seq.branch_tokens = branches ? match.num_block_tokens : 0;
}

bool Scheduler::any_in_micro_batch() const {
  return std::any_of(running_.begin(), running_.end(), [](const Sequence* seq) { return seq->in_micro_batch; });
}

int32_t Scheduler::max_rows(int32_t num_micro_batches_left) const {
  const auto free = std::count_if(running_.begin(), running_.end(), [](const Sequence* s) { return !s->in_micro_batch; });
  const int32_t num_free = static_cast<int32_t>(free) + static_cast<int32_t>(waiting_.size());
  return std::max(1, (num_free + num_micro_batches_left - 1) / std::max(1, num_micro_batches_left));
}

void Scheduler::schedule_running(StepPlan& plan, int32_t& budget, int32_t max_rows) {
  for (auto it = running_.begin(); it != running_.end() && budget > 0;) {
    Sequence& seq = **it;
    const int32_t num_tokens = seq.in_micro_batch || std::ssize(plan.rows) >= max_rows ? 0 : admit_tokens(seq, budget);
    if (num_tokens == 0) { ++it; continue; }
    // A decode row verifies its drafts too, as far as budget and free blocks allow.
    int32_t drafts = num_tokens == 1 && seq.num_tokens_behind() == 1
                         ? std::min<int32_t>(static_cast<int32_t>(seq.draft_tokens.size()), budget - 1) : 0;
    if (drafts > 0 && !reserve_blocks(seq, num_tokens + drafts)) drafts = 0;
    if (!reserve_blocks(seq, num_tokens)) {
      if (preempt_newest(&seq, plan, budget)) continue;  // retry this sequence with the freed blocks
      // Alone and still short: recomputing would meet the same wall (the Engine keeps
      // max_model_len within the pool, so this is a safety net). Not alone while a
      // micro-batch in flight holds blocks: it waits for them.
      if (!any_in_micro_batch()) plan.out_of_blocks.push_back(&seq);
      ++it;
      continue;
    }
    plan.rows.push_back({&seq, num_tokens + drafts, drafts});
    budget -= num_tokens + drafts;
    ++it;
  }
}

StepPlan Scheduler::schedule(int32_t num_micro_batches_left) {
  StepPlan plan;
  int32_t budget = options_.max_num_batched_tokens;
  const int32_t rows_cap = max_rows(num_micro_batches_left);
  schedule_running(plan, budget, rows_cap);
  while (!waiting_.empty() && budget > 0 && std::ssize(plan.rows) < rows_cap &&
         static_cast<int32_t>(running_.size()) < options_.max_num_seqs) {
    Sequence& seq = *waiting_.front();
    const int32_t num_tokens = admit(seq, budget);
    if (num_tokens == 0) break;  // strict order: nobody jumps the head
    waiting_.pop_front();
    if (memory_.prefix_cache() != nullptr && seq.last_match_tokens >= 0) {
      if (seq.num_output_tokens() == 0) seq.request->num_cached_tokens = seq.last_match_tokens;
      seq.request->num_prefix_queries += seq.num_tokens();
      seq.request->num_prefix_hits += seq.last_match_tokens;
      seq.last_match_tokens = -1;
    }
    add_running(&seq);
    plan.rows.push_back({&seq, num_tokens});
    budget -= num_tokens;
  }
  return plan;
}

}  // namespace strata
