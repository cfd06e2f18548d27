#include "strata/engine/draft_model.h"

#include <algorithm>
#include <unordered_set>

#include "strata/core/error.h"
#include "strata/engine/draft_token.h"

namespace strata {

DraftModel::DraftModel(ModelRunner& runner, int32_t num_speculative_tokens, int32_t max_catch_up_tokens)
    : runner_(runner), memory_(runner.memory()), num_speculative_tokens_(num_speculative_tokens),
      max_catch_up_tokens_(max_catch_up_tokens) {}

DraftModel::~DraftModel() {
  for (auto& [id, state] : states_) free_state(state);
}

void DraftModel::free_state(State& state) { memory_.free(state.block_table, state.ssm_slot); }

void DraftModel::release(int64_t seq_id) {
  auto it = states_.find(seq_id);
  if (it == states_.end()) return;
  free_state(it->second);
  states_.erase(it);
}

void DraftModel::release_except(const std::list<Sequence*>& running) {
  std::unordered_set<int64_t> keep;
  for (const Sequence* seq : running) keep.insert(seq->id);
  for (auto it = states_.begin(); it != states_.end();) {
    if (keep.contains(it->first)) {
      ++it;
      continue;
    }
    free_state(it->second);
    it = states_.erase(it);
  }
}

void DraftModel::accept(const Sequence& seq, int32_t num_accepted) {
  auto it = states_.find(seq.id);
  if (it == states_.end()) return;
  State& state = it->second;
  // KV is positional: the last token and the kept guesses are already right. A recurrent
  // state only ever holds verified tokens, so the next catch-up feeds them again.
  if (state.ssm_slot < 0) state.num_computed_tokens += 1 + std::min(num_accepted, state.num_fed_drafts);
  state.num_fed_drafts = 0;
}

bool DraftModel::add_catch_up_row(const DraftRequest& request, int32_t& budget, std::vector<StepRow>& rows,
                                  std::vector<Proposal>& proposals) {
  Sequence& seq = *request.seq;
  auto [it, fresh] = states_.try_emplace(seq.id);
  State& state = it->second;
  if (fresh && memory_.ssm() != nullptr) {
    const std::optional<int32_t> slot = memory_.acquire_slot();
    if (!slot) {
      states_.erase(it);
      return false;
    }
    state.ssm_slot = *slot;
  }
  // A proposing row ends with the newest token (its logits give the first draft); a prompt
  // is caught up as far as the target has computed it.
  bool proposing = request.max_drafts > 0;
  const int32_t known = seq.num_known_tokens();
  const int32_t first = state.num_computed_tokens;
  int32_t count = (proposing ? known : std::min(known, seq.num_computed_tokens)) - first;
  if (count > budget) {
    proposing = false;
    count = budget;
  }
  if (count <= 0) return false;
  const int32_t drafts = proposing ? std::min(request.max_drafts, num_speculative_tokens_) : 0;
  if (!memory_.reserve(state.block_table, first + count + std::max(0, drafts - 1))) {
    release(seq.id);  // the draft's pool is short: this sequence goes without drafts for now
    return false;
  }
  StepRow row{.seq_id = seq.id,
              .token_ids = {seq.token_ids.begin() + first, seq.token_ids.begin() + first + count},
              .num_computed_tokens = first,
              .block_table = state.block_table,
              .ssm_slot = state.ssm_slot,
              .logits = proposing ? LogitsMode::kLast : LogitsMode::kNone};
  Proposal proposal{.seq = &seq, .max_drafts = drafts, .next_position = first + count};
  if (proposing && state.ssm_slot >= 0) {
    // The row runs on a copy; the kept state stops before the newest token (fed again next step).
    const std::optional<ForkedMemory> copy = memory_.fork({}, 0, state.ssm_slot);
    if (!copy) return false;
    proposal.guess_slot = copy->ssm_slot;
    row.ssm_slot = proposal.guess_slot;
    if (count > 1) row.ssm_snapshots.push_back({.after_tokens = count - 1, .slot = state.ssm_slot});
  }
  budget -= count;
  state.num_computed_tokens = first + count - (proposing ? 1 : 0);
  state.num_fed_drafts = 0;
  rows.push_back(std::move(row));
  if (proposing) proposals.push_back(proposal);
  return true;
}

void DraftModel::run_and_draft(std::vector<StepRow> rows, std::vector<Proposal>& proposals) {
  std::vector<Proposal*> active;
  for (Proposal& p : proposals)
    if (static_cast<int32_t>(p.seq->draft_tokens.size()) < p.max_drafts) active.push_back(&p);
  StepBatch batch(std::move(rows), runner_.block_size());
  const Tensor logits = runner_.execute(batch);  // [one row per active proposal, vocab] on the host
  STRATA_CHECK(logits.dim(0) == static_cast<int64_t>(active.size()));
  const int64_t vocab = logits.dim(1);
  for (size_t i = 0; i < active.size(); ++i)
    append_draft_token(*active[i]->seq, {logits.data_as<const float>() + static_cast<int64_t>(i) * vocab,
                                         static_cast<size_t>(vocab)});
}

void DraftModel::propose(std::span<const DraftRequest> requests) {
  std::vector<Proposal> proposals;
  try {
    run_proposals(requests, proposals);
  } catch (...) {
    // A failed forward leaves the draft's states unknown: every sequence starts over.
    for (const Proposal& p : proposals)
      if (p.guess_slot >= 0) memory_.free_slot(p.guess_slot);
    for (auto& [id, state] : states_) free_state(state);
    states_.clear();
    throw;
  }
  for (const Proposal& p : proposals)
    if (p.guess_slot >= 0) memory_.free_slot(p.guess_slot);
}

void DraftModel::run_proposals(std::span<const DraftRequest> requests, std::vector<Proposal>& proposals) {
  std::vector<StepRow> rows;
  int32_t budget = max_catch_up_tokens_;
  for (const DraftRequest& request : requests) add_catch_up_row(request, budget, rows, proposals);
  if (!rows.empty()) run_and_draft(std::move(rows), proposals);
  for (int32_t step = 1; step < num_speculative_tokens_; ++step) {
    std::vector<StepRow> guesses;
    for (Proposal& p : proposals) {
      if (p.max_drafts <= step) continue;
      State& state = states_.at(p.seq->id);
      guesses.push_back({.seq_id = p.seq->id,
                         .token_ids = {p.seq->draft_tokens.back()},
                         .num_computed_tokens = p.next_position++,
                         .block_table = state.block_table,
                         .ssm_slot = p.guess_slot >= 0 ? p.guess_slot : state.ssm_slot,
                         .logits = LogitsMode::kLast});
      ++state.num_fed_drafts;
    }
    if (guesses.empty()) break;
    run_and_draft(std::move(guesses), proposals);
  }
}

}  // namespace strata
