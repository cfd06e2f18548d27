#include "strata/engine/model_runner.h"

#include <algorithm>

#include "strata/backend/device_error.h"
#include "strata/core/error.h"
#include "strata/model/forward_context.h"
#include "strata/ops/pending_tokens.h"

namespace strata {
namespace {

constexpr int64_t kGraphBuckets[] = {1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 224, 256, 384, 512};
constexpr int64_t kMaxAutoBlocks = int64_t{1} << 22;

}  // namespace

KvCacheShape kv_cache_shape(const Model& model, const Backend& backend, int64_t block_size, KvCacheDType dtype) {
  return {.num_layers = model.num_kv_layers(),
          .num_blocks = 0,
          .block_size = block_size,
          .num_kv_heads = model.kv_cache_heads(),
          .head_dim = model.kv_cache_head_dim(),
          // Layers that keep per-token state in cache rows read them as f32 on every backend.
          .dtype = model.parts().kv_cache_rows_f32 ? DType::kF32 : kv_cache_storage_dtype(dtype, backend.device())};
}

ModelRunner::ModelRunner(const Model& model, Backend& backend, const RunnerOptions& options)
    : model_(model), backend_(backend), options_(options), layer_workspace_(backend),
      step_workspace_(backend), step_buffers_(backend), held_workspace_(backend) {
  const ModelConfig& config = model.config();
  if (model.parts().kv_cache_rows_f32 && options_.kv_cache_dtype == KvCacheDType::kFp8)
    fail("{} keeps per-token layer state in f32 KV-cache rows, which an fp8 cache cannot hold; drop "
         "--kv-cache-dtype fp8", config.model_type);
  if (control() != nullptr) {
    // Rank 0's slot ids name slots everywhere; its commands size them from flags ranks skip.
    options_.num_ssm_slots = first_rank_value(*control(), options_.num_ssm_slots);
    options_.max_verify_tokens = first_rank_value(*control(), options_.max_verify_tokens);
    // Over stages the last stage sends stage 0's MTP module the target's hidden states, and every
    // stage hands on the aux layers' rows that stage 0's EAGLE-3 head reads.
    if (options_.pipeline != nullptr) {
      options_.keep_hidden_states = first_rank_value(*control(), options_.keep_hidden_states) != 0;
      std::vector<int64_t>& aux = options_.aux_hidden_layers;
      aux.resize(first_rank_value(*control(), static_cast<int64_t>(aux.size())));
      for (int64_t& layer : aux) layer = first_rank_value(*control(), layer);
    }
  }
  KvCacheShape shape = kv_cache_shape(model, backend, options_.block_size, options_.kv_cache_dtype);
  std::unique_ptr<SsmStatePool> ssm_pool;
  std::unique_ptr<VerifyStateBuffers> verify_states;
  if (model.num_ssm_layers() > 0) {
    const std::vector<SsmLayerShape>& layers = model.ssm_layer_shapes();
    // State in the backend's memory, so the recurrent kernels read and write it in place;
    // made before the KV cache so that an automatic KV size leaves room for it.
    // One slot more than asked for: the scratch state of padding rows in captured graphs.
    ssm_pool = std::make_unique<SsmStatePool>(layers, static_cast<int>(options_.num_ssm_slots) + 1,
                                              options_.ssm_state_dtype, &backend_);
    padding_ssm_slot_ = *ssm_pool->reserve_scratch_slot();
    verify_states = std::make_unique<VerifyStateBuffers>(layers, static_cast<int>(options_.max_verify_tokens),
                                                         &backend_);
  }
  if (options_.num_kv_blocks == 0) {
    options_.num_kv_blocks = auto_kv_blocks(shape);
    // Rank 0's block ids name blocks on every rank, whose memory may differ.
    if (control() != nullptr) options_.num_kv_blocks = min_over_ranks(*control(), options_.num_kv_blocks);
  }
  if (model.num_kv_layers() > 0) {
    shape.num_blocks = options_.num_kv_blocks;
    kv_cache_ = std::make_unique<KvCache>(shape, backend);
  }
  std::vector<Tensor> kv_pools;
  for (int64_t layer = 0; kv_cache_ && layer < shape.num_layers; ++layer) {
    kv_pools.push_back(kv_cache_->k(layer));
    kv_pools.push_back(kv_cache_->v(layer));
  }
  memory_ = std::make_unique<SequenceMemory>(SequenceMemoryParts{
      .blocks = std::make_unique<BlockPool>(static_cast<int32_t>(options_.num_kv_blocks)),
      .ssm = std::move(ssm_pool),
      .verify = std::move(verify_states),
      .block_size = static_cast<int32_t>(options_.block_size),
      .copy_kv_block = [this](int32_t src, int32_t dst) { copy_kv_block(src, dst); },
      .kv_pools = std::move(kv_pools),
      .backend = &backend_,
      .memory_listener = memory_listener(),
      // Stage 0 chooses the host rows of every stage's KV blocks, with or without attention of its own.
      .keep_block_rows = options_.pipeline != nullptr});
  repeat_slots_on_other_ranks();  // after the scratch slot: every rank reserved the same one
  const int64_t graph_kv_len = std::min(config.max_position_embeddings, options_.max_graph_kv_len);
  graph_blocks_per_row_ = (graph_kv_len + options_.block_size - 1) / options_.block_size;
}

void ModelRunner::copy_kv_block(int32_t src, int32_t dst) {
  // First: under pipeline parallelism another stage may hold attention layers where this one has none.
  send_to_other_ranks({.kind = RankMessage::Kind::kCopyKvBlock, .src_block = src, .dst_block = dst});
  if (!kv_cache_) return;
  for (int64_t layer = 0; layer < kv_cache_->shape().num_layers; ++layer) {
    backend_.copy(kv_cache_->k(layer).slice_rows(dst, dst + 1), kv_cache_->k(layer).slice_rows(src, src + 1));
    backend_.copy(kv_cache_->v(layer).slice_rows(dst, dst + 1), kv_cache_->v(layer).slice_rows(src, src + 1));
  }
}

ModelRunner::~ModelRunner() {
  try {
    finish_micro_batches();  // leaves no stage waiting to hand its logits over
  } catch (const std::exception&) {  // a lost group: nobody is waiting
  }
}

void ModelRunner::set_lora(const LoraSet* lora) {
  lora_ = lora;
  graphs_.clear();
}

void ModelRunner::repeat_lora_load(int32_t slot, const std::string& name, const std::string& path) {
  if (control() == nullptr || control()->rank() != 0) return;
  const std::lock_guard lock(lora_loads_mutex_);
  lora_loads_.push_back({.slot = slot, .name = name, .path = path});
}

void ModelRunner::send_lora_loads() {
  std::vector<LoraLoad> loads;
  {
    const std::lock_guard lock(lora_loads_mutex_);
    loads.swap(lora_loads_);
  }
  for (const LoraLoad& load : loads) {
    send_to_other_ranks({.kind = RankMessage::Kind::kLoadLora, .lora_slot = load.slot, .lora_name = load.name,
                         .lora_path = load.path});
    std::string error;
    try {
      error = first_error_over_ranks(*control(), "");
    } catch (const std::exception& e) {
      lose_group(e);
    }
    if (!error.empty()) lose_group(Error(error));
  }
}

// A laptop-friendly default; --num-kv-blocks sets any size.
constexpr int64_t kCpuKvBudgetBytes = int64_t{1} << 30;

// GPU: what gpu_memory_utilization leaves after weights and the activation reserve.
// CPU: room for 8 sequences of the model's maximum length, within kCpuKvBudgetBytes.
MemoryListener ModelRunner::memory_listener() {
  if (control() == nullptr || control()->rank() != 0) return {};
  auto to_vector = [](std::span<const int32_t> ids) { return std::vector<int32_t>(ids.begin(), ids.end()); };
  MemoryListener listener{.swap_space = [this](int64_t bytes, int32_t num_host_blocks, int32_t num_host_slots) {
            send_to_other_ranks({.kind = RankMessage::Kind::kSwapSpace, .swap_space_bytes = bytes,
                                 .num_host_blocks = num_host_blocks, .num_host_slots = num_host_slots});
          },
          .copy = [this, to_vector](const SwapCopy& copy) {
            send_to_other_ranks({.kind = copy.out ? RankMessage::Kind::kSwapOut : RankMessage::Kind::kSwapIn,
                                 .device_blocks = to_vector(copy.device_blocks),
                                 .host_blocks = to_vector(copy.host_blocks),
                                 .device_slot = copy.device_slot,
                                 .host_slot = copy.host_slot});
          },
          .roll_back = [this](int32_t slot, int32_t num_verified, int32_t num_accepted) {
            send_to_other_ranks({.kind = RankMessage::Kind::kRollBackSsmSlot, .ssm_slot = slot,
                                 .num_verified = num_verified, .num_accepted = num_accepted});
          }};
  listener.snapshot_rows = [this](int32_t rows) {
    send_to_other_ranks({.kind = RankMessage::Kind::kSnapshotRows, .snapshot_rows = rows});
  };
  listener.snapshot_copy = [this](const SnapshotCopy& copy) {
    send_to_other_ranks({.kind = copy.out ? RankMessage::Kind::kSnapshotOut : RankMessage::Kind::kSnapshotIn,
                         .device_slot = copy.slot, .host_slot = copy.row});
  };
  return listener;
}

void ModelRunner::repeat_slots_on_other_ranks() {
  if (memory_->ssm() == nullptr || control() == nullptr || control()->rank() != 0) return;
  using Kind = RankMessage::Kind;
  memory_->ssm()->set_listener({
      .allocated = [this](int32_t slot) { send_to_other_ranks({.kind = Kind::kTakeSsmSlot, .ssm_slot = slot}); },
      .freed = [this](int32_t slot) { send_to_other_ranks({.kind = Kind::kFreeSsmSlot, .ssm_slot = slot}); },
      .copied = [this](int32_t src, int32_t dst) {
        send_to_other_ranks({.kind = Kind::kCopySsmSlot, .ssm_slot = dst, .ssm_src_slot = src});
      }});
}

void ModelRunner::send_to_other_ranks(const RankMessage& message) {
  if (control() == nullptr || control()->rank() != 0) return;
  if (group_lost_) return;  // freeing what sequences held after the loss: nothing left to tell
  try {
    send_to_ranks(*control(), message);
  } catch (const std::exception& e) {
    lose_group(e);
  }
}

const char* ModelRunner::group_kind() const {
  return splits_layers() ? "pipeline-parallel" : "tensor-parallel";
}

// Once a rank is gone or a step failed halfway, the ranks are out of step for good: the engine
// treats it as a lost device (every request fails, /health says so) so the server can restart.
void ModelRunner::lose_group(const std::exception& error) {
  group_lost_ = true;
  throw DeviceError(fmt::format("the {} group is lost; restart the server (in Python: make a new LLM): {}",
                                group_kind(), error.what()),
                    /*sticky=*/true);
}

int64_t ModelRunner::auto_kv_blocks(const KvCacheShape& shape) const {
  const int64_t per_sequence =
      (model_.config().max_position_embeddings + options_.block_size - 1) / options_.block_size;
  const std::optional<DeviceMemory> memory = backend_.memory();
  if (shape.num_layers == 0) return 8 * per_sequence;
  if (!memory) return std::max<int64_t>(per_sequence, std::min(8 * per_sequence, kCpuKvBudgetBytes / shape.bytes_per_block()));
  const int64_t used = memory->total_bytes - memory->free_bytes;
  const int64_t budget = static_cast<int64_t>(static_cast<double>(memory->total_bytes) *
                                              options_.gpu_memory_utilization) -
                         used - options_.activation_reserve_bytes;
  const int64_t blocks = budget / (shape.bytes_per_block() + options_.shared_kv_bytes_per_block);
  if (blocks < 1)
    fail("--gpu-memory-utilization {}: {} MiB of {} MiB are in use already, {} MiB are reserved for "
         "activations; no room for the KV cache. Raise the utilization or use a smaller model",
         options_.gpu_memory_utilization, used >> 20, memory->total_bytes >> 20,
         options_.activation_reserve_bytes >> 20);
  return std::min(blocks, kMaxAutoBlocks);
}

ForwardContext ModelRunner::forward_context(const Tensor& lora_slots) {
  return {.backend = backend_,
          .workspace = layer_workspace_,
          .step_workspace = step_workspace_,
          .kv_cache = kv_cache_.get(),
          .ssm_pool = memory_->ssm(),
          .verify_states = memory_->verify(),
          .activation_dtype = backend_.device().is_cpu() ? DType::kF32 : DType::kBF16,
          .lora = lora_,
          .tensor_parallel = options_.tensor_parallel,
          .pipeline = options_.pipeline,
          .lora_slots = lora_slots,
          .keep_hidden_states = options_.keep_hidden_states,
          .aux_hidden_layers = options_.aux_hidden_layers};
}

Tensor ModelRunner::forward(const StepBatch& step, bool hold_stage_output) {
  ForwardContext ctx = forward_context(step.device().lora_slots);
  ctx.hold_stage_output = hold_stage_output;
  last_hidden_states_ = last_aux_hidden_states_ = Tensor();
  try {
    Tensor out = model_.forward(step, ctx);
    last_hidden_states_ = ctx.hidden_states;
    last_aux_hidden_states_ = ctx.aux_hidden_states;
    return out;
  } catch (...) {  // a failed step leaves nothing handed out for the next one
    layer_workspace_.reset();
    step_workspace_.reset();
    throw;
  }
}

Tensor ModelRunner::execute(StepBatch& step, const Tensor& pending_ids) {
  const Tensor logits = execute_on_device(step, pending_ids);
  return backend_.to_host(logits);
}

// The step workspace is reset right away: nothing is allocated before the next step, so
// the logits stay where they are until then.
Tensor ModelRunner::execute_on_device(StepBatch& step, const Tensor& pending_ids) {
  backend_.make_current();  // the step may run on another thread than the one that made the backend
  if (!splits_over_ranks()) return run_step(step, pending_ids);
  check_group();
  STRATA_CHECK_MSG(started_.empty(), "a step runs through while {} micro-batches are in flight", started_.size());
  send_lora_loads();
  send_to_other_ranks({.kind = RankMessage::Kind::kStep, .rows = step.rows(), .block_size = step.block_size(),
                       .min_blocks_per_row = step.max_blocks_per_row()});
  try {
    return run_step(step, pending_ids);
  } catch (const std::exception& e) {
    lose_group(e);
  }
}

void ModelRunner::check_group() const {
  if (group_lost_)
    throw DeviceError(fmt::format("the {} group is lost; restart the server (in Python: make a new LLM)", group_kind()),
                      /*sticky=*/true);
}

Tensor ModelRunner::run_step(StepBatch& step, const Tensor& pending_ids) {
  if (const int64_t bucket = graph_bucket(step); bucket > 0) return execute_graph(step, bucket, pending_ids);
  const Tensor logits = run_eagerly(step, pending_ids, /*hold_stage_output=*/false);
  step_workspace_.reset();
  return logits;
}

Tensor ModelRunner::run_eagerly(StepBatch& step, const Tensor& pending_ids, bool hold_stage_output) {
  if (backend_.device().is_cpu()) {
    step.upload(backend_);
  } else {
    step.upload(step_buffers_);
    if (step.has_image_tokens()) step.upload_images(backend_);
  }
  fill_pending(step, pending_ids);
  return forward(step, hold_stage_output);
}

void ModelRunner::fill_pending(const StepBatch& step, const Tensor& pending_ids) {
  if (step.num_pending_tokens() == 0) return;
  STRATA_CHECK_MSG(pending_ids.defined(), "a step takes {} pending tokens but no previous samples were given",
                   step.num_pending_tokens());
  ops::fill_pending_tokens(pending_ids, step.device().pending_tokens, step.device().token_ids);
}

std::vector<int64_t> ModelRunner::captured_batch_sizes() const {
  std::vector<int64_t> sizes;
  for (const auto& [batch_size, graph] : graphs_) sizes.push_back(batch_size);
  return sizes;
}

int64_t ModelRunner::capture_decode_graphs(int64_t max_batch_size) {
  backend_.make_current();
  for (int64_t bucket : kGraphBuckets) {
    if (bucket > max_batch_size || bucket > options_.max_graph_batch_size) break;
    std::vector<StepRow> rows(bucket, padding_row());
    StepBatch step(std::move(rows), options_.block_size, graph_blocks_per_row_);
    if (graph_bucket(step) != bucket) break;
    execute_graph(step, bucket, Tensor());
  }
  return num_captured_graphs();
}

int64_t ModelRunner::graph_bucket(const StepBatch& step) const {
  if (backend_.device().is_cpu() || options_.max_graph_batch_size <= 0 || step.max_q_len() != 1) return 0;
  if (splits_over_ranks()) return 0;  // collectives are not captured yet
  if (model_.config().pooler) return 0;  // prefill only: one-token prompts are not worth a graph
  if (step.has_image_tokens()) return 0;  // prompts only; their embeddings and streams are not captured
  if (step.device().input_hidden_states.defined()) return 0;  // an MTP step: its input lives with the caller
  // Recurrent layers are captured as one batched launch over slot ids: no snapshots, no
  // per-token states, f32 state.
  if (model_.num_ssm_layers() > 0 &&
      (!step.is_plain_ssm_decode() || memory_->ssm()->h_state_dtype() != SsmStateDType::kF32))
    return 0;
  for (int64_t i = 0; i < model_.num_layers(); ++i)
    if (!model_.caps(i).graph_safe) return 0;
  if (step.num_logits() != step.num_rows()) return 0;
  for (const StepRow& row : step.rows())
    if (static_cast<int64_t>(row.block_table.size()) > graph_blocks_per_row_) return 0;
  for (int64_t bucket : kGraphBuckets)
    if (bucket >= step.num_rows()) return bucket <= options_.max_graph_batch_size ? bucket : 0;
  return 0;
}

StepRow ModelRunner::padding_row() const {
  return {.seq_id = -1, .token_ids = {0}, .block_table = {0}, .ssm_slot = padding_ssm_slot_, .padding = true};
}

int64_t ModelRunner::addresses_generation() const {
  return step_buffers_.generation() + layer_workspace_.generation() + step_workspace_.generation();
}

// The first step of a bucket runs eagerly (settling every allocation), then its kernels are
// captured; later steps of the bucket only upload metadata and replay. Padding rows fill
// the bucket: they read block 0 and never write the cache, and their SSM state is the pool's
// scratch slot.
Tensor ModelRunner::execute_graph(const StepBatch& step, int64_t bucket, const Tensor& pending_ids) {
  std::vector<StepRow> rows = step.rows();
  for (int64_t i = step.num_rows(); i < bucket; ++i)
    rows.push_back(padding_row());
  StepBatch padded(std::move(rows), options_.block_size, graph_blocks_per_row_);
  padded.upload(step_buffers_);
  fill_pending(padded, pending_ids);
  auto it = graphs_.find(bucket);
  if (it != graphs_.end() && it->second.generation != addresses_generation()) {
    graphs_.erase(it);
    it = graphs_.end();
  }
  if (it != graphs_.end()) {
    it->second.work->replay();
    const Tensor& hidden = it->second.hidden_states;
    last_hidden_states_ = hidden.defined() ? hidden.slice_rows(0, step.num_tokens()) : Tensor();
    last_aux_hidden_states_ = it->second.aux_hidden_states;  // padded rows stay: readers index by row
    return it->second.logits.slice_rows(0, step.num_logits());
  }
  const Tensor logits = forward(padded);
  step_workspace_.reset();
  const int64_t generation = addresses_generation();
  Tensor captured_logits;
  const Tensor eager_hidden = last_hidden_states_, eager_aux = last_aux_hidden_states_;
  std::unique_ptr<CapturedWork> work = backend_.capture([&] { captured_logits = forward(padded); });
  step_workspace_.reset();
  if (work && addresses_generation() == generation)
    graphs_[bucket] = DecodeGraph{std::move(work), captured_logits, last_hidden_states_, last_aux_hidden_states_,
                                  generation};
  last_hidden_states_ = eager_hidden.defined() ? eager_hidden.slice_rows(0, step.num_tokens()) : Tensor();
  last_aux_hidden_states_ = eager_aux;
  return logits.slice_rows(0, step.num_logits());
}

}  // namespace strata
