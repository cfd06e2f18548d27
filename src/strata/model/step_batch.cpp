#include "strata/model/step_batch.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "strata/core/error.h"

namespace strata {

StepBatch::StepBatch(std::vector<StepRow> rows, int64_t block_size, int64_t min_blocks_per_row)
    : rows_(std::move(rows)), block_size_(block_size), max_blocks_per_row_(std::max<int64_t>(1, min_blocks_per_row)) {
  cu_seqlens_.push_back(0);
  for (const StepRow& row : rows_)
    max_blocks_per_row_ = std::max<int64_t>(max_blocks_per_row_, row.block_table.size());
  for (const StepRow& row : rows_) {
    STRATA_CHECK(row.q_len() > 0);
    const int32_t kv_len = row.num_computed_tokens + row.q_len();
    STRATA_CHECK_MSG(static_cast<int64_t>(row.block_table.size()) * block_size >= kv_len,
                     "row {} needs {} tokens of KV, block table covers {}", row.seq_id, kv_len,
                     row.block_table.size() * block_size);
    logits_row_offsets_.push_back(static_cast<int32_t>(logits_indices_.size()));
    for (int32_t i = 0; i < row.q_len(); ++i) {
      const int32_t pos = row.num_computed_tokens + i;
      const int32_t t = static_cast<int32_t>(token_ids_.size());
      token_ids_.push_back(row.token_ids[i]);
      lora_slots_.push_back(row.lora_slot);
      slot_mapping_.push_back(row.padding ? -1
                                          : static_cast<int32_t>(row.block_table[pos / block_size] * block_size +
                                                                 pos % block_size));
      if (row.logits == LogitsMode::kAll || (row.logits == LogitsMode::kLast && i == row.q_len() - 1))
        logits_indices_.push_back(t);
    }
    add_positions(row);
    if (row.pending_sample >= 0) {  // kPendingToken becomes id 0 until the runner writes the sample
      STRATA_CHECK(!row.padding);
      token_ids_.back() = 0;
      pending_tokens_.insert(pending_tokens_.end(), {static_cast<int32_t>(token_ids_.size()) - 1, row.pending_sample});
    }
    cu_seqlens_.push_back(static_cast<int32_t>(token_ids_.size()));
    kv_lens_.push_back(kv_len);
    std::vector<int32_t> table = row.block_table;
    table.resize(max_blocks_per_row_, 0);
    block_tables_.insert(block_tables_.end(), table.begin(), table.end());
    max_q_len_ = std::max<int64_t>(max_q_len_, row.q_len());
    ssm_slots_.push_back(row.ssm_slot);
    plain_ssm_decode_ = plain_ssm_decode_ && row.q_len() == 1 && row.ssm_slot >= 0 &&
                        row.ssm_snapshots.empty() && !row.keep_intermediates;
    max_kv_len_ = std::max<int64_t>(max_kv_len_, kv_len);
  }
  build_token_types();
  if (!has_image_tokens()) return;
  build_mrope_positions();
  gather_image_embeds();
}

// Appends the row's 1-D positions (the temporal stream for a prompt with images).
void StepBatch::add_positions(const StepRow& row) {
  for (int32_t i = 0; i < row.q_len(); ++i) {
    const int32_t index = row.num_computed_tokens + i;
    if (!row.multimodal) {
      positions_.push_back(index);
      continue;
    }
    if (const PromptImage* image = row.multimodal->image_at(index)) {
      image_rows_.push_back(static_cast<int32_t>(positions_.size()));
      image_tokens_.push_back({image, index - image->first_token});
    }
    positions_.push_back(row.multimodal->rope_position(index)[0]);
  }
}

// [3, T]: the (t, h, w) streams of every token, built only for steps holding image tokens;
// text rows' three streams are equal.
void StepBatch::build_mrope_positions() {
  const int64_t t = num_tokens();
  mrope_positions_.assign(3 * t, 0);
  int64_t n = 0;
  for (const StepRow& row : rows_)
    for (int32_t i = 0; i < row.q_len(); ++i, ++n) {
      const int32_t index = row.num_computed_tokens + i;
      const std::array<int32_t, 3> pos =
          row.multimodal ? row.multimodal->rope_position(index) : std::array<int32_t, 3>{index, index, index};
      for (int s = 0; s < 3; ++s) mrope_positions_[s * t + n] = pos[s];
    }
}

void StepBatch::build_token_types() {
  if (std::none_of(rows_.begin(), rows_.end(), [](const StepRow& row) { return row.token_type_ids != nullptr; }))
    return;
  for (const StepRow& row : rows_)
    for (int32_t i = 0; i < row.q_len(); ++i) {
      const size_t index = static_cast<size_t>(row.num_computed_tokens + i);
      STRATA_CHECK(row.token_type_ids == nullptr || index < row.token_type_ids->size());
      token_type_ids_.push_back(row.token_type_ids != nullptr ? (*row.token_type_ids)[index] : 0);
    }
}

void StepBatch::gather_image_embeds() {
  const int64_t hidden = image_tokens_.front().image->embeds.dim(1);
  image_embeds_ = Tensor::host(DType::kF32, {static_cast<int64_t>(image_tokens_.size()), hidden});
  for (size_t n = 0; n < image_tokens_.size(); ++n) {
    const ImageToken& token = image_tokens_[n];
    STRATA_CHECK(token.image->embeds.dim(1) == hidden && token.image->embeds.dtype() == DType::kF32);
    std::memcpy(image_embeds_.data_as<float>() + n * hidden, token.image->embeds.data_as<float>() + token.offset * hidden,
                hidden * sizeof(float));
  }
}

namespace {

// A view of `host` on the CPU, else a new device copy.
Tensor to_device(Backend& backend, std::vector<int32_t>& host, Shape shape) {
  Tensor view = Tensor::view(host.data(), DType::kI32, shape);
  if (backend.device().is_cpu()) return view;
  return host.empty() ? backend.empty(DType::kI32, shape) : backend.from_host(view);
}

}  // namespace

void StepBatch::upload(Backend& backend) {
  auto to_device = [&](std::vector<int32_t>& host, Shape shape) { return strata::to_device(backend, host, shape); };
  const int64_t r = num_rows();
  device_.token_ids = to_device(token_ids_, {num_tokens()});
  device_.positions = to_device(positions_, {num_tokens()});
  device_.slot_mapping = to_device(slot_mapping_, {num_tokens()});
  device_.cu_seqlens = to_device(cu_seqlens_, {r + 1});
  device_.kv_lens = to_device(kv_lens_, {r});
  device_.block_tables = to_device(block_tables_, {r, max_blocks_per_row_});
  device_.logits_indices = to_device(logits_indices_, {num_logits()});
  device_.ssm_slots = plain_ssm_decode_ && r > 0 ? to_device(ssm_slots_, {r}) : Tensor();
  device_.pending_tokens = to_device(pending_tokens_, {num_pending_tokens(), 2});
  device_.lora_slots = to_device(lora_slots_, {num_tokens()});
  if (has_token_types()) device_.token_type_ids = to_device(token_type_ids_, {num_tokens()});
  if (has_image_tokens()) upload_images(backend);
}

void StepBatch::upload_images(Backend& backend) {
  STRATA_CHECK(has_image_tokens());
  device_.mrope_positions = to_device(backend, mrope_positions_, {3, num_tokens()});
  device_.image_rows = to_device(backend, image_rows_, {static_cast<int64_t>(image_rows_.size())});
  device_.image_embeds = backend.device().is_cpu() ? image_embeds_ : backend.from_host(image_embeds_);
}

void StepBatch::upload(StepBuffers& buffers) {
  const int64_t r = num_rows();
  StepBuffers::Fields fields;
  fields[StepBuffers::kTokenIds] = token_ids_;
  fields[StepBuffers::kPositions] = positions_;
  fields[StepBuffers::kSlotMapping] = slot_mapping_;
  fields[StepBuffers::kCuSeqlens] = cu_seqlens_;
  fields[StepBuffers::kKvLens] = kv_lens_;
  fields[StepBuffers::kLogitsIndices] = logits_indices_;
  // Only batched recurrent launches read the slots; other steps skip them.
  if (plain_ssm_decode_ && r > 0) fields[StepBuffers::kSsmSlots] = ssm_slots_;
  fields[StepBuffers::kPendingTokens] = pending_tokens_;
  fields[StepBuffers::kLoraSlots] = lora_slots_;
  fields[StepBuffers::kTokenTypeIds] = token_type_ids_;  // empty unless a row has token types
  fields[StepBuffers::kBlockTables] = block_tables_;
  const std::array<Tensor, StepBuffers::kNumFields> views = buffers.upload(fields);
  device_.token_ids = views[StepBuffers::kTokenIds];
  device_.positions = views[StepBuffers::kPositions];
  device_.slot_mapping = views[StepBuffers::kSlotMapping];
  device_.cu_seqlens = views[StepBuffers::kCuSeqlens];
  device_.kv_lens = views[StepBuffers::kKvLens];
  device_.logits_indices = views[StepBuffers::kLogitsIndices];
  device_.ssm_slots = plain_ssm_decode_ && r > 0 ? views[StepBuffers::kSsmSlots] : Tensor();
  device_.pending_tokens = views[StepBuffers::kPendingTokens].reshape({num_pending_tokens(), 2});
  device_.block_tables = views[StepBuffers::kBlockTables].reshape({r, max_blocks_per_row_});
  device_.lora_slots = views[StepBuffers::kLoraSlots];
  device_.token_type_ids = has_token_types() ? views[StepBuffers::kTokenTypeIds] : Tensor();
}

}  // namespace strata
