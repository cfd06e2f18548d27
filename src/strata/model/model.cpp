#include "strata/model/model.h"

#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"
#include "strata/ops/linear.h"

namespace strata {

Model::Model(ModelConfig config, Parts parts) : config_(std::move(config)), parts_(std::move(parts)) {}

void Model::add_layer(std::unique_ptr<Layer> layer, std::string description) {
  const LayerCaps caps = layer->caps();
  kv_index_.push_back(caps.uses_kv_cache ? num_kv_layers_++ : -1);
  ssm_index_.push_back(caps.ssm_h_state_elems > 0 ? num_ssm_layers_++ : -1);
  caps_.push_back(caps);
  layers_.push_back(std::move(layer));
  descriptions_.push_back(std::move(description));
}

Tensor Model::forward(const StepBatch& step, ForwardContext& ctx) const {
  const int64_t t = step.num_tokens(), hidden = config_.hidden_size;
  Tensor x = ctx.step_workspace.alloc(ctx.activation_dtype, {t, hidden});
  ops::embedding(parts_.embed_tokens, step.device().token_ids, x);
  if (parts_.embed_scale != 1.0f) ops::scale(x, parts_.embed_scale);
  for (size_t i = 0; i < layers_.size(); ++i) {
    ctx.kv_layer = kv_index_[i];
    ctx.ssm_layer = ssm_index_[i];
    ctx.layer = static_cast<int64_t>(i);
    layers_[i]->forward(step, x, ctx);
    ctx.workspace.reset();
  }
  const int64_t num_logits = step.num_logits();
  Tensor last = ctx.step_workspace.alloc(ctx.activation_dtype, {num_logits, hidden});
  ops::gather_rows(x, step.device().logits_indices, last);
  parts_.final_norm.apply(last, last);
  Tensor logits = ctx.step_workspace.alloc(DType::kF32, {num_logits, config_.vocab_size});
  if (num_logits > 0) ops::linear(last, parts_.lm_head, Tensor(), logits);
  return logits;
}

}  // namespace strata
