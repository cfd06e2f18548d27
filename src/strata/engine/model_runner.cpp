#include "strata/engine/model_runner.h"

#include "strata/model/forward_context.h"

namespace strata {

ModelRunner::ModelRunner(const Model& model, Backend& backend, const RunnerOptions& options)
    : model_(model), backend_(backend), options_(options), layer_workspace_(backend),
      step_workspace_(backend) {
  const ModelConfig& config = model.config();
  if (options_.num_kv_blocks == 0)
    options_.num_kv_blocks = 8 * ((config.max_position_embeddings + options_.block_size - 1) / options_.block_size);
  block_pool_ = std::make_unique<BlockPool>(static_cast<int32_t>(options_.num_kv_blocks));
  if (model.num_kv_layers() > 0) {
    const KvCacheShape shape{.num_layers = model.num_kv_layers(),
                             .num_blocks = options_.num_kv_blocks,
                             .block_size = options_.block_size,
                             .num_kv_heads = config.num_key_value_heads,
                             .head_dim = config.head_dim,
                             .dtype = backend.device().is_cpu() ? DType::kF32 : DType::kBF16};
    kv_cache_ = std::make_unique<KvCache>(shape, backend);
  }
}

ModelRunner::~ModelRunner() = default;

Tensor ModelRunner::execute(StepBatch& step) {
  step.upload(backend_);
  ForwardContext ctx{.backend = backend_,
                     .workspace = layer_workspace_,
                     .step_workspace = step_workspace_,
                     .kv_cache = kv_cache_.get(),
                     .activation_dtype = backend_.device().is_cpu() ? DType::kF32 : DType::kBF16};
  Tensor logits = model_.forward(step, ctx);
  Tensor host = backend_.to_host(logits);
  step_workspace_.reset();
  return host;
}

}  // namespace strata
