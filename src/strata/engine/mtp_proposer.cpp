#include "strata/engine/mtp_proposer.h"

#include <algorithm>
#include <limits>
#include <unordered_set>

#include "strata/core/error.h"
#include "strata/engine/draft_token.h"
#include "strata/ops/elementwise.h"

namespace strata {

MtpProposer::MtpProposer(ModelRunner& mtp_runner, ModelRunner& target_runner, int32_t num_speculative_tokens)
    : runner_(mtp_runner), target_(target_runner), memory_(mtp_runner.memory()),
      num_speculative_tokens_(num_speculative_tokens) {
  runner_.start_keeping_hidden_states();
  const Eagle3Head& eagle3 = runner_.model().parts().eagle3;
  if (eagle3.defined()) {
    target_.start_keeping_aux_hidden_states(eagle3.target_layers);
  } else {
    target_.start_keeping_hidden_states();
  }
}

const Tensor& MtpProposer::target_states() const {
  return runner_.model().parts().eagle3.defined() ? target_.last_aux_hidden_states() : target_.last_hidden_states();
}

std::span<const float> MtpProposer::target_logits(std::span<const float> logits) {
  const std::vector<int32_t>& d2t = runner_.model().parts().eagle3.draft_to_target;
  if (d2t.empty()) return logits;
  STRATA_CHECK(logits.size() == d2t.size());
  mapped_logits_.assign(target_.model().config().vocab_size, -std::numeric_limits<float>::infinity());
  for (size_t i = 0; i < d2t.size(); ++i) mapped_logits_[i + d2t[i]] = logits[i];
  return mapped_logits_;
}

MtpProposer::~MtpProposer() { free_all(); }

void MtpProposer::free_all() {
  for (auto& [id, state] : states_) free_blocks(state.block_table);
  states_.clear();
}

void MtpProposer::free_blocks(std::vector<int32_t>& block_table) {
  int32_t no_slot = -1;  // the module has attention layers only
  memory_.free(block_table, no_slot);
}

void MtpProposer::lose(State& state) {
  free_blocks(state.block_table);
  state.block_table.clear();
  state.lost = true;
}

void MtpProposer::release(int64_t seq_id) {
  auto it = states_.find(seq_id);
  if (it == states_.end()) return;
  free_blocks(it->second.block_table);
  states_.erase(it);
}

void MtpProposer::release_except(const std::list<Sequence*>& running) {
  std::unordered_set<int64_t> keep;
  for (const Sequence* seq : running) keep.insert(seq->id);
  std::vector<int64_t> stale;
  for (const auto& [id, state] : states_)
    if (!keep.contains(id)) stale.push_back(id);
  for (int64_t id : stale) release(id);
}

void MtpProposer::record_target_step(const StepBatch& step, std::span<const ScheduledRow> rows) {
  target_rows_.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StepRow& row = step.rows()[i];
    target_rows_[row.seq_id] = {.first_position = row.num_computed_tokens,
                                .hidden_row = static_cast<int32_t>(step.row_start(static_cast<int64_t>(i))),
                                .num_positions = rows[i].num_tokens - rows[i].num_draft_tokens};
  }
}

void MtpProposer::accept(const Sequence& seq, int32_t num_accepted) {
  auto it = target_rows_.find(seq.id);
  if (it != target_rows_.end()) it->second.num_positions += num_accepted;
}

void MtpProposer::add_catch_up_row(const DraftRequest& request, Forward& forward, std::vector<Proposal>& proposals) {
  Sequence& seq = *request.seq;
  const auto target_it = target_rows_.find(seq.id);
  auto [it, fresh] = states_.try_emplace(seq.id);
  State& state = it->second;
  if (fresh && (target_it == target_rows_.end() || target_it->second.first_position > 0)) state.lost = true;
  if (state.lost || target_it == target_rows_.end()) return;
  const TargetRow& target = target_it->second;
  const int32_t first = state.num_computed_tokens;
  if (first < target.first_position) return lose(state);  // positions the module never saw
  // Position p reads token p + 1: the verified positions whose next token is known.
  const int32_t end = std::min(target.first_position + target.num_positions, seq.num_known_tokens() - 1);
  if (end <= first) return;
  const bool proposing = request.max_drafts > 0 && end == seq.num_known_tokens() - 1;
  const int32_t drafts = proposing ? std::min(request.max_drafts, num_speculative_tokens_) : 0;
  if (!memory_.reserve(state.block_table, end + std::max(0, drafts - 1))) return lose(state);
  const auto tokens = seq.token_ids.begin();
  forward.rows.push_back({.seq_id = seq.id,
                          .token_ids = {tokens + first + 1, tokens + end + 1},
                          .num_computed_tokens = first,
                          .block_table = state.block_table,
                          .logits = proposing ? LogitsMode::kLast : LogitsMode::kNone});
  for (int32_t p = first; p < end; ++p) forward.hidden_rows.push_back(target.hidden_row + p - target.first_position);
  state.num_computed_tokens = end;
  if (proposing) proposals.push_back({.seq = &seq, .max_drafts = drafts, .next_position = end});
}

Tensor MtpProposer::gather_hidden(const Tensor& source, std::span<const int32_t> rows) {
  const bool joined = source.rank() == 3;  // [S, T, hidden]: row i takes S rows, one of each part
  const int64_t parts = joined ? source.dim(0) : 1, t = joined ? source.dim(1) : source.dim(0);
  const int64_t n = static_cast<int64_t>(rows.size()), width = source.dim(source.rank() - 1);
  if (!hidden_input_.defined() || hidden_input_.numel() < n * parts * width || hidden_input_.dtype() != source.dtype())
    hidden_input_ = runner_.backend().empty(source.dtype(), {std::max<int64_t>(n, 64) * parts * width});
  Tensor indices = Tensor::host(DType::kI32, {n * parts});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < parts; ++j)
      indices.data_as<int32_t>()[i * parts + j] = static_cast<int32_t>(j * t + rows[i]);
  const Tensor out = hidden_input_.slice_rows(0, n * parts * width).reshape({n * parts, width});
  ops::gather_rows(source.reshape({parts * t, width}),
                   runner_.backend().device().is_cpu() ? indices : runner_.backend().from_host(indices), out);
  return out.reshape({n, parts * width});
}

void MtpProposer::run_and_draft(Forward forward, const Tensor& source) {
  STRATA_CHECK(source.defined());
  const Tensor hidden = gather_hidden(source, forward.hidden_rows);
  StepBatch batch(std::move(forward.rows), runner_.block_size());
  batch.set_input_hidden_states(hidden);
  const Tensor logits = runner_.execute(batch);  // [one row per drafting proposal, vocab] on the host
  STRATA_CHECK(logits.dim(0) == static_cast<int64_t>(forward.drafting.size()));
  const int64_t vocab = logits.dim(1);
  size_t d = 0;
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    if (batch.rows()[r].logits == LogitsMode::kNone) continue;
    Proposal& p = *forward.drafting[d];
    append_draft_token(*p.seq, target_logits({logits.data_as<const float>() + static_cast<int64_t>(d) * vocab,
                                              static_cast<size_t>(vocab)}));
    p.hidden_row = static_cast<int32_t>(batch.row_start(r) + batch.rows()[r].q_len() - 1);
    ++d;
  }
}

void MtpProposer::run_proposals(std::span<const DraftRequest> requests, std::vector<Proposal>& proposals) {
  Forward catch_up;
  proposals.reserve(requests.size());  // the forward keeps pointers into it
  for (const DraftRequest& request : requests) add_catch_up_row(request, catch_up, proposals);
  if (catch_up.rows.empty()) return;
  for (Proposal& p : proposals) catch_up.drafting.push_back(&p);
  run_and_draft(std::move(catch_up), target_states());
  for (int32_t step = 1; step < num_speculative_tokens_; ++step) {
    Forward guesses;
    for (Proposal& p : proposals) {
      if (p.max_drafts <= step) continue;
      guesses.rows.push_back({.seq_id = p.seq->id,
                              .token_ids = {p.seq->draft_tokens.back()},
                              .num_computed_tokens = p.next_position++,
                              .block_table = states_.at(p.seq->id).block_table,
                              .logits = LogitsMode::kLast});
      guesses.hidden_rows.push_back(p.hidden_row);
      guesses.drafting.push_back(&p);
    }
    if (guesses.rows.empty()) break;
    run_and_draft(std::move(guesses), runner_.last_hidden_states());
  }
}

void MtpProposer::propose(std::span<const DraftRequest> requests) {
  std::vector<Proposal> proposals;
  try {
    run_proposals(requests, proposals);
  } catch (...) {
    // A failed forward leaves the module's states unknown: every sequence starts over (lost).
    free_all();
    target_rows_.clear();
    throw;
  }
  target_rows_.clear();
}

}  // namespace strata
