#include "strata/engine/direct_session.h"

#include <cstring>

#include "strata/core/error.h"

namespace strata {

DirectSession::~DirectSession() {
  for (auto& [id, seq] : sequences_) free_state(seq);
}

void DirectSession::free_state(SequenceState& seq) {
  SequenceMemory& memory = runner_.memory();
  memory.free(seq.block_table, seq.ssm_slot);
  for (const auto& [length, slot] : seq.snapshots) memory.free_slot(slot);
  seq.snapshots.clear();
}

int32_t DirectSession::allocate_ssm_slot() {
  const std::optional<int32_t> slot = runner_.memory().acquire_slot();
  if (!slot)
    fail("SSM state slots exhausted ({} in use for sequences and snapshots); raise "
         "RunnerOptions::num_ssm_slots or release sequences", runner_.ssm_pool()->capacity());
  return *slot;
}

int64_t DirectSession::add_sequence(std::shared_ptr<const MultimodalPrompt> images) {
  SequenceState seq{.images = std::move(images)};
  if (runner_.ssm_pool() != nullptr) seq.ssm_slot = allocate_ssm_slot();
  sequences_[next_id_] = std::move(seq);
  return next_id_++;
}

void DirectSession::release(int64_t seq_id) {
  auto it = sequences_.find(seq_id);
  STRATA_CHECK(it != sequences_.end());
  free_state(it->second);
  sequences_.erase(it);
}

void DirectSession::reserve_blocks(SequenceState& seq, int32_t num_tokens) {
  if (!runner_.memory().reserve(seq.block_table, num_tokens))
    fail("KV cache exhausted: {} tokens need more blocks than the {} free; raise --num-kv-blocks", num_tokens,
         runner_.block_pool().num_free());
}

StepRow DirectSession::make_row(const StepInput& in, SequenceState& seq) {
  const int32_t n = static_cast<int32_t>(in.token_ids.size());
  if (n == 0) fail("step input for sequence {} has no tokens", in.seq_id);
  if (in.snapshot_after < 0 || in.snapshot_after > n)
    fail("snapshot_after is {} for an input of {} tokens; it must be in [0, {}]", in.snapshot_after,
         n, n);
  if (in.verify && n > runner_.max_verify_tokens())
    fail("verify input of {} tokens; the runner keeps states for at most {} "
         "(RunnerOptions::max_verify_tokens)", n, runner_.max_verify_tokens());
  reserve_blocks(seq, seq.num_tokens + n);
  StepRow row{.seq_id = in.seq_id, .token_ids = in.token_ids,
              .num_computed_tokens = seq.num_tokens, .block_table = seq.block_table,
              .ssm_slot = seq.ssm_slot, .logits = in.logits, .lora_slot = in.lora_slot,
              .multimodal = seq.images};
  if (runner_.ssm_pool() != nullptr) {
    row.keep_intermediates = in.verify;
    if (in.snapshot_after > 0) {
      const int32_t length = seq.num_tokens + in.snapshot_after;
      auto it = seq.snapshots.find(length);
      if (it == seq.snapshots.end()) it = seq.snapshots.emplace(length, allocate_ssm_slot()).first;
      row.ssm_snapshots.push_back({.after_tokens = in.snapshot_after, .slot = it->second});
    }
  }
  return row;
}

std::vector<Tensor> DirectSession::step(const std::vector<StepInput>& inputs) {
  std::vector<StepRow> rows;
  for (const StepInput& in : inputs) rows.push_back(make_row(in, sequences_.at(in.seq_id)));
  StepBatch batch(std::move(rows), runner_.block_size());
  Tensor logits = runner_.execute(batch);
  std::vector<Tensor> out;
  const int64_t vocab = logits.rank() == 2 ? logits.dim(1) : 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    SequenceState& seq = sequences_.at(inputs[i].seq_id);
    seq.verify_base = inputs[i].verify ? seq.num_tokens : -1;
    seq.verify_len = static_cast<int32_t>(inputs[i].token_ids.size());
    seq.num_tokens += static_cast<int32_t>(inputs[i].token_ids.size());
    const int64_t begin = batch.logits_row_offsets()[i];
    const int64_t end = i + 1 < inputs.size() ? batch.logits_row_offsets()[i + 1] : batch.num_logits();
    Tensor part = Tensor::host(DType::kF32, {end - begin, vocab});
    std::memcpy(part.data(), logits.data_as<float>() + begin * vocab, part.nbytes());
    out.push_back(part);
  }
  return out;
}

int64_t DirectSession::fork(int64_t seq_id, int32_t num_tokens) {
  const SequenceState& parent = sequences_.at(seq_id);
  if (num_tokens < 0 || num_tokens > parent.num_tokens)
    fail("fork of sequence {} at {} tokens; it has {}", seq_id, num_tokens, parent.num_tokens);
  int32_t state_slot = -1;
  if (runner_.ssm_pool() != nullptr && num_tokens > 0) {
    auto it = parent.snapshots.find(num_tokens);
    if (it != parent.snapshots.end()) state_slot = it->second;
    else if (num_tokens == parent.num_tokens) state_slot = parent.ssm_slot;
    else fail("fork of sequence {} at {} tokens: no SSM snapshot at that length (request one with "
              "StepInput::snapshot_after)", seq_id, num_tokens);
  }
  std::optional<ForkedMemory> memory = runner_.memory().fork(parent.block_table, num_tokens, state_slot);
  if (!memory)
    fail("fork of sequence {} at {} tokens: no free KV block or SSM slot; raise --num-kv-blocks or "
         "RunnerOptions::num_ssm_slots, or release sequences", seq_id, num_tokens);
  SequenceState child{.num_tokens = num_tokens, .block_table = std::move(memory->block_table),
                      .ssm_slot = memory->ssm_slot, .images = parent.images};
  // A hybrid model's fork at 0 tokens starts from a fresh state.
  if (runner_.ssm_pool() != nullptr && child.ssm_slot < 0) child.ssm_slot = allocate_ssm_slot();
  sequences_[next_id_] = std::move(child);
  return next_id_++;
}

void DirectSession::rollback(int64_t seq_id, int32_t num_accepted) {
  SequenceState& seq = sequences_.at(seq_id);
  if (seq.verify_base < 0)
    fail("rollback of sequence {}: its last step was not a verify input", seq_id);
  if (num_accepted < 1 || num_accepted > seq.verify_len)
    fail("rollback of sequence {} to {} accepted tokens; the verify input had {}", seq_id,
         num_accepted, seq.verify_len);
  if (seq.ssm_slot >= 0) runner_.memory().roll_back(seq.ssm_slot, seq.verify_len, num_accepted);
  seq.num_tokens = seq.verify_base + num_accepted;
  seq.verify_base = -1;
}

}  // namespace strata
