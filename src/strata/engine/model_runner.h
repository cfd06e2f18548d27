// ModelRunner: runs one StepBatch through the model on its backend. It owns what a forward
// needs besides weights: the KV cache, the SequenceMemory (blocks, SSM slots, verify states),
// the workspaces, the persistent step-metadata buffers and, on CUDA, one captured graph per
// decode batch-size bucket. It only reads the memory the rows name; everything above it
// (sessions, the scheduler) allocates through memory() and speaks in StepRows.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "strata/cache/kv_cache.h"
#include "strata/cache/sequence_memory.h"
#include "strata/core/error.h"
#include "strata/model/model.h"
#include "strata/model/step_batch.h"
#include "strata/model/step_buffers.h"
#include "strata/model/workspace.h"
#include "strata/parallel/step_message.h"

namespace strata {

class Communicator;
class LoraSet;
struct PipelineLinks;

struct RunnerOptions {
  int64_t num_kv_blocks = 0;  // 0: from gpu_memory_utilization (GPU), 8 max-length sequences (CPU)
  int64_t block_size = 16;
  int64_t num_ssm_slots = 16;   // live sequences plus snapshots (hybrid models)
  int64_t max_verify_tokens = 16;  // longest verify row whose SSM states can be rolled back
  SsmStateDType ssm_state_dtype = SsmStateDType::kF32;  // f16 halves h_state memory
  KvCacheDType kv_cache_dtype = KvCacheDType::kAuto;    // fp8: e4m3 keys and values, half of bf16's memory
  double gpu_memory_utilization = 0.9;  // share of device memory weights + KV + activations may use
  int64_t activation_reserve_bytes = int64_t{4} << 30;  // kept out of the KV pool for temporaries
  int64_t max_graph_batch_size = 256;  // decode steps up to this many rows replay CUDA graphs; 0: never
  int64_t max_graph_kv_len = 16384;    // longer rows run eagerly (fixed block-table stride in graphs)
  // KV bytes another runner takes for each block of this pool (a draft model's cache, given as
  // many blocks): an automatic GPU size splits the budget so both fit.
  int64_t shared_kv_bytes_per_block = 0;
  // Every step keeps its tokens' final-normed hidden states readable until the next step
  // (last_hidden_states()): what an MTP module reads from its target and from itself.
  bool keep_hidden_states = false;
  // Every step keeps the inputs of these layers (ascending) readable until the next step
  // (last_aux_hidden_states()): what an EAGLE-3 head reads from its target.
  std::vector<int64_t> aux_hidden_layers;
  // The tensor-parallel group of a model built from sharded weights: layers sum their partial
  // outputs over it. Null: one rank.
  Communicator* tensor_parallel = nullptr;
  // The message channel of a tensor- or pipeline-parallel group: rank 0 sends every step and
  // change of device memory to the other ranks first (parallel/step_message.h), which repeat them
  // on their part of the model, and the ranks agree on pool sizes over it. Null: tensor_parallel.
  Communicator* rank_control = nullptr;
  // A pipeline stage's links to its neighbours (a model built for one stage); null: one stage.
  const PipelineLinks* pipeline = nullptr;
};

// The paged KV cache's shape for `model` on `backend` (num_blocks 0: the caller sizes it).
KvCacheShape kv_cache_shape(const Model& model, const Backend& backend, int64_t block_size, KvCacheDType dtype);

class ModelRunner {
 public:
  ModelRunner(const Model& model, Backend& backend, const RunnerOptions& options);
  ~ModelRunner();

  // Runs the step; returns the logits [step.num_logits(), vocab] f32 in host memory.
  Tensor execute(StepBatch& step, const Tensor& pending_ids = Tensor());
  // The same, leaving the logits on the device: a view valid until the next step (for
  // samplers on the device and for timing the step without the copy to the host). Only
  // queues the work on a GPU. pending_ids: [S] i32 on the step's device, the previous
  // step's samples that rows with a pending_sample take as their last token.
  Tensor execute_on_device(StepBatch& step, const Tensor& pending_ids = Tensor());
  // Rank 0 of a pipeline: one step per stage may be in flight (stage 0 runs one while each later
  // stage runs one before it); else 1 (execute_on_device runs each step through).
  int64_t max_micro_batches() const;
  // Stage 0's ranks: runs stage 0's layers of `step` and hands its output on, at once while fewer
  // steps than later stages are out, else when the oldest one's logits are back. Rank 0 sends the
  // step to the other ranks first. At most max_micro_batches() started.
  void start_micro_batch(StepBatch& step);
  // The logits [num_logits, vocab] f32 on the host of the oldest step started, waited for.
  Tensor finish_micro_batch();
  // Waits for every started step's logits and drops them (an engine that stops).
  void finish_micro_batches();
  int64_t num_micro_batches() const { return static_cast<int64_t>(started_.size()); }
  // Captures the decode graph of every batch-size bucket up to max_batch_size now, so the
  // first requests do not pay for it (a server calls this before it reports ready).
  // Returns the number of graphs held afterwards; 0 where steps run eagerly (CPU).
  int64_t capture_decode_graphs(int64_t max_batch_size);

  // Copies KV block src over dst in every layer (sequence memory's copy-on-write).
  void copy_kv_block(int32_t src, int32_t dst);
  const Model& model() const { return model_; }
  // Part of a tensor- or pipeline-parallel group (the engine then runs the synchronous loop).
  bool splits_over_ranks() const { return control() != nullptr; }
  bool splits_layers() const { return options_.pipeline != nullptr; }
  // Stage 0 of two or more pipeline stages (any of its tensor-parallel ranks).
  bool is_first_stage() const;
  Backend& backend() { return backend_; }
  // Where sequences' blocks and slots come from (and go back to).
  SequenceMemory& memory() { return *memory_; }
  KvCache* kv_cache() { return kv_cache_.get(); }
  // The memory's stores, for inspection. ssm_pool and verify_states are null for models
  // without recurrent layers.
  BlockPool& block_pool() { return memory_->blocks(); }
  SsmStatePool* ssm_pool() { return memory_->ssm(); }
  VerifyStateBuffers* verify_states() { return memory_->verify(); }
  int64_t max_verify_tokens() const { return options_.max_verify_tokens; }
  int64_t block_size() const { return options_.block_size; }
  int64_t num_kv_blocks() const { return options_.num_kv_blocks; }
  // With keep_hidden_states: the last step's [num_tokens, hidden] states after the final norm
  // (activation dtype, on the device; a view valid until the next step); else undefined.
  const Tensor& last_hidden_states() const { return last_hidden_states_; }
  // With aux_hidden_layers: the last step's [num aux layers, num_tokens, hidden] inputs of those
  // layers (activation dtype, on the device; a view valid until the next step); else undefined.
  const Tensor& last_aux_hidden_states() const { return last_aux_hidden_states_; }
  // Sets keep_hidden_states (an MTP proposer's target and module); graphs are captured again.
  void start_keeping_hidden_states() {
    if (options_.keep_hidden_states) return;
    options_.keep_hidden_states = true;
    graphs_.clear();
  }
  // Sets aux_hidden_layers (an EAGLE-3 head's target); graphs are captured again.
  void start_keeping_aux_hidden_states(std::vector<int64_t> layers) {
    if (options_.aux_hidden_layers == layers) return;
    // Over stages every rank took the layers from rank 0's options when its runner started.
    STRATA_CHECK_MSG(options_.pipeline == nullptr, "aux layers must be in RunnerOptions under stages");
    options_.aux_hidden_layers = std::move(layers);
    graphs_.clear();
  }
  int64_t num_captured_graphs() const { return static_cast<int64_t>(graphs_.size()); }
  std::vector<int64_t> captured_batch_sizes() const;  // ascending; empty where steps run eagerly
  // LoRA adapters rows may name by StepRow::lora_slot (kept alive by the caller); set before
  // graphs are captured, since captured steps read them. Under tensor or pipeline parallelism
  // each rank sets its part (LoraPlacement).
  void set_lora(const LoraSet* lora);
  const LoraSet* lora() const { return lora_; }
  // Rank 0 of a parallel group, after loading an adapter into `slot` of its LoraSet: the other
  // ranks load their part of the same folder into the same slot before the next step, and a rank
  // that cannot fails the group (that step throws). A no-op elsewhere. Callable from any thread.
  void repeat_lora_load(int32_t slot, const std::string& name, const std::string& path);

 private:
  struct DecodeGraph {
    std::unique_ptr<CapturedWork> work;
    Tensor logits;  // [bucket, vocab] f32, in the step workspace
    Tensor hidden_states;  // [bucket, hidden] with keep_hidden_states, else undefined
    Tensor aux_hidden_states;  // [num aux layers, bucket, hidden] with aux_hidden_layers, else undefined
    int64_t generation = 0;
  };

  int64_t auto_kv_blocks(const KvCacheShape& shape) const;
  // The group's message channel (RunnerOptions::rank_control), or null for one rank.
  Communicator* control() const {
    return options_.rank_control != nullptr ? options_.rank_control : options_.tensor_parallel;
  }
  // Rank 0 of a parallel group: sends `message` to the other ranks; a no-op elsewhere.
  void send_to_other_ranks(const RankMessage& message);
  // Stage 0: the logits of the oldest started step not yet back, onto the host, then the held
  // output on to stage 1; receive_all: of every started step (before a LoRA load).
  void receive_next();
  void receive_all();
  bool has_lora_loads() {
    const std::lock_guard lock(lora_loads_mutex_);
    return !lora_loads_.empty();
  }
  void check_group() const;  // throws the sticky DeviceError of a lost group
  [[noreturn]] void lose_group(const std::exception& error);
  const char* group_kind() const;  // names the group in errors
  Tensor run_step(StepBatch& step, const Tensor& pending_ids);  // execute_on_device's work on this rank
  // A step without a graph; hold_stage_output: stage 0 returns its layers' output unsent. The
  // step workspace is not reset.
  Tensor run_eagerly(StepBatch& step, const Tensor& pending_ids, bool hold_stage_output);
  // Rank 0 of a parallel group: repeats swaps on the other ranks; empty elsewhere.
  MemoryListener memory_listener();
  // Rank 0 of a parallel group: repeats SSM slot allocation, freeing and copies.
  void repeat_slots_on_other_ranks();
  // Rank 0 of a parallel group: the repeat_lora_load calls since the last step, in order.
  void send_lora_loads();
  // Copies one KV block's contents (every attention layer) into another block.
  Tensor forward(const StepBatch& step, bool hold_stage_output = false);
  ForwardContext forward_context(const Tensor& lora_slots);
  // The captured batch size for a decode-only step, 0 when it runs eagerly.
  int64_t graph_bucket(const StepBatch& step) const;
  Tensor execute_graph(const StepBatch& step, int64_t bucket, const Tensor& pending_ids);  // device logits
  // Writes the previous step's samples into the uploaded token ids of `step`.
  static void fill_pending(const StepBatch& step, const Tensor& pending_ids);
  // A row that fills a graph bucket: token 0 on block 0, KV never written, SSM state scratch.
  StepRow padding_row() const;
  // Changes whenever an address a captured graph reads or writes may have moved.
  int64_t addresses_generation() const;

  const Model& model_;
  Backend& backend_;
  RunnerOptions options_;
  std::unique_ptr<KvCache> kv_cache_;
  std::unique_ptr<SequenceMemory> memory_;
  Workspace layer_workspace_, step_workspace_;
  StepBuffers step_buffers_;
  int64_t graph_blocks_per_row_ = 0;
  int32_t padding_ssm_slot_ = -1;  // scratch SSM slot of graph padding rows (hybrid models)
  std::map<int64_t, DecodeGraph> graphs_;
  const LoraSet* lora_ = nullptr;
  struct LoraLoad {
    int32_t slot = -1;
    std::string name, path;
  };
  std::mutex lora_loads_mutex_;  // the caller loads between batches; the engine's thread sends
  std::vector<LoraLoad> lora_loads_;
  bool group_lost_ = false;  // a rank is gone or out of step: nothing more is sent
  Tensor last_hidden_states_;
  Tensor last_aux_hidden_states_;
  struct StartedStep {
    int64_t num_logits = 0, num_tokens = 0;
    Tensor logits;  // on the host once back
  };
  std::deque<StartedStep> started_;  // micro-batches not finished yet, oldest first
  int64_t num_handed_on_ = 0;  // started steps handed to stage 1 whose logits are not back
  Workspace held_workspace_;  // reused: on a GPU no allocation a step
  Tensor held_rows_;  // [T, hidden] stage 0's output of the newest step, while every later stage holds one
};

}  // namespace strata
