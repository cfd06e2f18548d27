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
  if (model.num_ssm_layers() > 0) {
    std::vector<SsmLayerShape> layers;
    for (int64_t i = 0; i < model.num_layers(); ++i)
      if (model.caps(i).ssm_h_state_elems > 0)
        layers.push_back({model.caps(i).ssm_h_state_elems, model.caps(i).ssm_conv_state_elems});
    ssm_pool_ = std::make_unique<SsmStatePool>(layers, static_cast<int>(options_.num_ssm_slots));
    verify_states_ = std::make_unique<VerifyStateBuffers>(
        layers, static_cast<int>(options_.max_verify_tokens));
  }
}

void ModelRunner::copy_kv_block(int32_t src, int32_t dst) {
  if (!kv_cache_) return;
  for (int64_t layer = 0; layer < kv_cache_->shape().num_layers; ++layer) {
    backend_.copy(kv_cache_->k(layer).slice_rows(dst, dst + 1), kv_cache_->k(layer).slice_rows(src, src + 1));
    backend_.copy(kv_cache_->v(layer).slice_rows(dst, dst + 1), kv_cache_->v(layer).slice_rows(src, src + 1));
  }
}

ModelRunner::~ModelRunner() = default;

Tensor ModelRunner::execute(StepBatch& step) {
  step.upload(backend_);
  ForwardContext ctx{.backend = backend_,
                     .workspace = layer_workspace_,
                     .step_workspace = step_workspace_,
                     .kv_cache = kv_cache_.get(),
                     .ssm_pool = ssm_pool_.get(),
                     .verify_states = verify_states_.get(),
                     .activation_dtype = backend_.device().is_cpu() ? DType::kF32 : DType::kBF16};
  Tensor logits = model_.forward(step, ctx);
  Tensor host = backend_.to_host(logits);
  step_workspace_.reset();
  return host;
}

}  // namespace strata
