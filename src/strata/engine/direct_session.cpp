#include "strata/engine/direct_session.h"

#include <cstring>

#include "strata/core/error.h"

namespace strata {

DirectSession::~DirectSession() {
  for (auto& [id, seq] : sequences_)
    for (int32_t block : seq.block_table) runner_.block_pool().release(block);
}

int64_t DirectSession::add_sequence() {
  sequences_[next_id_] = {};
  return next_id_++;
}

void DirectSession::release(int64_t seq_id) {
  auto it = sequences_.find(seq_id);
  STRATA_CHECK(it != sequences_.end());
  for (int32_t block : it->second.block_table) runner_.block_pool().release(block);
  sequences_.erase(it);
}

void DirectSession::reserve_blocks(SequenceState& seq, int32_t num_tokens) {
  const int64_t block_size = runner_.block_size();
  const int64_t needed = (num_tokens + block_size - 1) / block_size;
  const int64_t missing = needed - static_cast<int64_t>(seq.block_table.size());
  if (missing > 0 && !runner_.block_pool().allocate_n(static_cast<int32_t>(missing), seq.block_table))
    fail("KV cache exhausted: {} more blocks needed, {} free; raise --num-kv-blocks", missing,
         runner_.block_pool().num_free());
}

std::vector<Tensor> DirectSession::step(const std::vector<StepInput>& inputs) {
  std::vector<StepRow> rows;
  for (const StepInput& in : inputs) {
    SequenceState& seq = sequences_.at(in.seq_id);
    reserve_blocks(seq, seq.num_tokens + static_cast<int32_t>(in.token_ids.size()));
    rows.push_back({.seq_id = in.seq_id, .token_ids = in.token_ids,
                    .num_computed_tokens = seq.num_tokens, .block_table = seq.block_table,
                    .logits = in.logits});
  }
  StepBatch batch(std::move(rows), runner_.block_size());
  Tensor logits = runner_.execute(batch);
  std::vector<Tensor> out;
  const int64_t vocab = logits.rank() == 2 ? logits.dim(1) : 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    sequences_.at(inputs[i].seq_id).num_tokens += static_cast<int32_t>(inputs[i].token_ids.size());
    const int64_t begin = batch.logits_row_offsets()[i];
    const int64_t end = i + 1 < inputs.size() ? batch.logits_row_offsets()[i + 1] : batch.num_logits();
    Tensor part = Tensor::host(DType::kF32, {end - begin, vocab});
    std::memcpy(part.data(), logits.data_as<float>() + begin * vocab, part.nbytes());
    out.push_back(part);
  }
  return out;
}

}  // namespace strata
