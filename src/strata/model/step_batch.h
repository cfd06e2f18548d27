// StepBatch: everything one forward pass needs to know about its rows. A row is one
// sequence contributing q_len tokens: 1 for decode, k for a speculative verify, more for a
// prefill chunk. Tokens of all rows are stacked in row order ([T, hidden] activations);
// the flat metadata is built once per step and uploaded once, shared by every layer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/tensor.h"
#include "strata/model/multimodal_prompt.h"
#include "strata/model/step_buffers.h"

namespace strata {

enum class LogitsMode : uint8_t { kLast, kAll, kNone };

// Copy the SSM state after `after_tokens` of the row's tokens (1..q_len) into `slot`.
struct SsmSnapshotRequest {
  int32_t after_tokens = 0;
  int32_t slot = -1;
};

struct StepRow {
  int64_t seq_id = 0;
  std::vector<int32_t> token_ids;    // [q_len] this step's tokens
  int32_t num_computed_tokens = 0;   // tokens already in the KV cache / SSM state
  std::vector<int32_t> block_table;  // KV blocks covering num_computed_tokens + q_len tokens
  int32_t ssm_slot = -1;             // live SSM state slot (hybrid models)
  std::vector<SsmSnapshotRequest> ssm_snapshots;  // ascending after_tokens
  bool keep_intermediates = false;   // verify rows: keep the SSM state after every token
  LogitsMode logits = LogitsMode::kLast;
  bool padding = false;  // fills a captured batch size: its KV is never written (slot -1),
                         // its SSM state is the runner's padding slot
  // >= 0: the row's last token is still on the device, sampled by the previous step as its
  // sample #pending_sample; token_ids holds kPendingToken there, and the runner writes the id.
  int32_t pending_sample = -1;
  int32_t lora_slot = -1;  // the LoRA adapter every token of the row uses; -1: the base model
  // The sequence's images (MRoPE positions, embeddings of placeholder tokens); null: text only.
  std::shared_ptr<const MultimodalPrompt> multimodal;
  // Each prompt token's segment (an encoder cross-encoder's pair: 0 then 1); null: all 0.
  std::shared_ptr<const std::vector<int32_t>> token_type_ids;

  int32_t q_len() const { return static_cast<int32_t>(token_ids.size()); }
};

struct StepTensors {
  Tensor token_ids;       // [T] i32
  Tensor positions;       // [T] i32
  Tensor slot_mapping;    // [T] i32
  Tensor cu_seqlens;      // [R + 1] i32
  Tensor kv_lens;         // [R] i32
  Tensor block_tables;    // [R, max_blocks_per_row] i32
  Tensor logits_indices;  // [L] i32: token rows whose logits are computed
  Tensor ssm_slots;       // [R] i32: each row's SSM state slot; only for is_plain_ssm_decode()
  Tensor pending_tokens;  // [P, 2] i32: (index into token_ids, previous step's sample index)
  Tensor lora_slots;      // [T] i32: each token's LoRA adapter slot, -1 for none
  Tensor token_type_ids;  // [T] i32, only when a row carries token types (has_token_types())
  // Only when the step holds image tokens (has_image_tokens()), else undefined:
  Tensor mrope_positions;  // [3, T] i32: temporal, height, width rotary positions
  Tensor image_rows;       // [N] i32: the token rows that take image embeddings
  Tensor image_embeds;     // [N, hidden] f32: their embeddings, in image_rows' order
  // An MTP module's step only: the hidden state each token is joined with ([T, hidden],
  // activation dtype, on the device), set by the caller through set_input_hidden_states.
  Tensor input_hidden_states;
};

class StepBatch {
 public:
  // min_blocks_per_row widens the block-table stride (captured graphs need a fixed one).
  StepBatch(std::vector<StepRow> rows, int64_t block_size, int64_t min_blocks_per_row = 1);

  const std::vector<StepRow>& rows() const { return rows_; }
  int64_t num_rows() const { return static_cast<int64_t>(rows_.size()); }
  int64_t num_tokens() const { return static_cast<int64_t>(token_ids_.size()); }
  int64_t num_logits() const { return static_cast<int64_t>(logits_indices_.size()); }
  int64_t max_q_len() const { return max_q_len_; }
  int64_t max_kv_len() const { return max_kv_len_; }
  int64_t block_size() const { return block_size_; }
  // First stacked token of row r; row r spans [row_start(r), row_start(r + 1)).
  int64_t row_start(int64_t r) const { return cu_seqlens_[r]; }
  // Every row is one token with an SSM slot, no snapshots and no per-token states: recurrent
  // layers then run one batched launch over device().ssm_slots (graph-capturable).
  bool is_plain_ssm_decode() const { return plain_ssm_decode_; }
  // First logits row of each step row (rows with LogitsMode::kNone contribute none).
  const std::vector<int32_t>& logits_row_offsets() const { return logits_row_offsets_; }
  // Tokens the previous step sampled on the device that this step takes as input.
  int64_t num_pending_tokens() const { return static_cast<int64_t>(pending_tokens_.size() / 2); }
  // Image placeholder tokens in this step: they need three position streams and their embeddings.
  bool has_image_tokens() const { return !image_tokens_.empty(); }
  // Some row carries token types (pair inputs of encoders).
  bool has_token_types() const { return !token_type_ids_.empty(); }

  // Copies the metadata to the backend's device (views of host memory on the CPU).
  void upload(Backend& backend);
  // Copies the metadata into the runner's persistent device buffers; a step with image tokens
  // then needs upload_images too.
  void upload(StepBuffers& buffers);
  // hidden: [num_tokens(), hidden] on the step's device, owned by the caller until the step ran.
  void set_input_hidden_states(Tensor hidden) { device_.input_hidden_states = std::move(hidden); }
  // The image rows, their embeddings and the MRoPE streams as new tensors on `backend` (steps
  // with images are never captured, so their addresses need not stay).
  void upload_images(Backend& backend);
  int64_t max_blocks_per_row() const { return max_blocks_per_row_; }
  const StepTensors& device() const { return device_; }

 private:
  std::vector<StepRow> rows_;
  int64_t block_size_;
  std::vector<int32_t> token_ids_, positions_, slot_mapping_, cu_seqlens_, kv_lens_;
  std::vector<int32_t> block_tables_, logits_indices_, logits_row_offsets_, ssm_slots_, pending_tokens_, lora_slots_;
  std::vector<int32_t> token_type_ids_;  // [T] when some row has token types, else empty
  int64_t max_blocks_per_row_ = 1, max_q_len_ = 0, max_kv_len_ = 0;
  bool plain_ssm_decode_ = true;
  struct ImageToken {
    const PromptImage* image;
    int32_t offset;  // row of image->embeds
  };
  std::vector<ImageToken> image_tokens_;
  std::vector<int32_t> mrope_positions_, image_rows_;  // [3, T], [N]; only with image tokens
  Tensor image_embeds_;                                // [N, hidden] f32 host
  void add_positions(const StepRow& row);
  void build_mrope_positions();
  void gather_image_embeds();
  void build_token_types();
  StepTensors device_;
};

}  // namespace strata
