#include "strata/model/model.h"

#include <algorithm>

#include "strata/core/error.h"
#include "strata/model/layers/stream_head.h"
#include "strata/model/vision/vision_tower.h"
#include "strata/ops/activation.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/hyper_connection.h"
#include "strata/ops/linear.h"
#include "strata/ops/segment_mean.h"

namespace strata {

Model::Model(ModelConfig config, Parts parts) : config_(std::move(config)), parts_(std::move(parts)) {
  if (config_.head() == ModelHead::kLanguageModel) return;
  const bool has_head = parts_.lm_head.defined();
  const bool fits = config_.head() == ModelHead::kHiddenStates
                        ? !has_head
                        : has_head && parts_.lm_head.dim(0) == output_width();
  if (!fits)
    fail("model_type '{}' cannot be served as a pooling model (its builder sets its own output head); serve it "
         "with --runner generate", config_.model_type);
}

Model::~Model() = default;

void Model::set_vision_tower(std::unique_ptr<VisionTower> tower) { vision_tower_ = std::move(tower); }

int64_t Model::output_width() const {
  switch (config_.head()) {
    case ModelHead::kHiddenStates: return config_.hidden_size;
    case ModelHead::kClassifier: return config_.pooler->num_labels;
    case ModelHead::kLanguageModel: break;
  }
  return config_.vocab_size;
}

bool Model::causal() const {
  return std::all_of(caps_.begin(), caps_.end(), [](const LayerCaps& caps) { return caps.causal; });
}

void Model::set_tensor_parallel_size(int64_t size) {
  const std::string what = fmt::format("{} runs with --tensor-parallel-size 1 for now", config_.model_type);
  for (int64_t l = 0; l < num_layers(); ++l)
    if (!caps_[l].tensor_parallel)
      fail("layer {} ({}) does not split over tensor-parallel ranks yet: {}", l, descriptions_[l], what);
  // A vision tower is rank 0's alone (whole, not split): the ranks get its embeddings with each step.
  if (parts_.mtp_input.defined() || parts_.eagle3.defined() ||
      parts_.encoder_embeddings.defined() || config_.head() != ModelHead::kLanguageModel)
    fail("this model's input or output stage does not split over tensor-parallel ranks yet: {}", what);
  tensor_parallel_size_ = size;
}

void Model::add_layer(std::unique_ptr<Layer> layer, std::string description) {
  const LayerCaps caps = layer->caps();
  kv_index_.push_back(caps.uses_kv_cache ? num_kv_layers_++ : -1);
  auto add_state = [this](const SsmLayerShape& shape) {
    ssm_shapes_.push_back(shape);
    return num_ssm_layers() - 1;
  };
  ssm_index_.push_back(caps.ssm_h_state_elems > 0
                           ? add_state({caps.ssm_h_state_elems, caps.ssm_conv_state_elems}) : -1);
  const bool has_carry = caps.carry.h_state_elems > 0 || caps.carry.conv_state_elems > 0;
  carry_index_.push_back(has_carry ? add_state(caps.carry) : -1);
  caps_.push_back(caps);
  layers_.push_back(std::move(layer));
  descriptions_.push_back(std::move(description));
}

// Image placeholder tokens take the vision tower's embeddings instead of their token embedding.
void Model::place_image_embeds(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const Tensor& embeds = step.device().image_embeds;  // [N, hidden] f32
  if (embeds.dim(1) != config_.hidden_size)
    fail("image embeddings have width {} but the text model's hidden_size is {}", embeds.dim(1), config_.hidden_size);
  Tensor rows = embeds;
  if (x.dtype() != DType::kF32) {
    rows = ctx.step_workspace.alloc(x.dtype(), embeds.shape());
    ops::convert(embeds, rows);
  }
  ops::scatter_rows(rows, step.device().image_rows, x);
}

// x: [T, hidden] after the last layer -> each row replaced by the mean of its row's (sequence's)
// final-normed hidden states.
Tensor Model::sequence_means(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  if (parts_.final_layer_norm.defined()) parts_.final_layer_norm.apply(x, x);
  Tensor means = ctx.step_workspace.alloc(ctx.activation_dtype, x.shape());
  ops::segment_mean(x, step.device().cu_seqlens, means);
  return means;
}

Tensor Model::normed_output_rows(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  Tensor last = ctx.step_workspace.alloc(ctx.activation_dtype, {step.num_logits(), config_.hidden_size});
  if (parts_.hyper_head) {  // x: [T, streams * hidden], collapsed for the rows the head reads
    Tensor rows = ctx.step_workspace.alloc(ctx.activation_dtype, {step.num_logits(), x.dim(1)});
    ops::gather_rows(x, step.device().logits_indices, rows);
    parts_.hyper_head->collapse(rows, last, ctx);
    ctx.workspace.reset();
    if (parts_.final_norm.defined()) parts_.final_norm.apply(last, last);
    return last;
  }
  if (ctx.keep_hidden_states && parts_.eagle3.defined()) ctx.hidden_states = x;  // before the norm; unchanged below
  if (!ctx.keep_hidden_states || !parts_.final_norm.defined() || parts_.eagle3.defined()) {
    ops::gather_rows(x, step.device().logits_indices, last);
    if (parts_.final_norm.defined()) parts_.final_norm.apply(last, last);
    return last;
  }
  ctx.hidden_states = ctx.step_workspace.alloc(ctx.activation_dtype, x.shape());  // [T, hidden]
  if (x.dim(0) > 0) parts_.final_norm.apply(x, ctx.hidden_states);
  ops::gather_rows(ctx.hidden_states, step.device().logits_indices, last);
  return last;
}

void Model::keep_aux_hidden_state(int64_t layer, const Tensor& x, ForwardContext& ctx) const {
  const auto& layers = ctx.aux_hidden_layers;
  const auto it = std::find(layers.begin(), layers.end(), layer);
  if (it == layers.end()) return;
  const int64_t t = x.dim(0), n = static_cast<int64_t>(layers.size());
  const int64_t j = it - layers.begin();
  if (t > 0) ops::convert(x, ctx.aux_hidden_states.reshape({n * t, x.dim(1)}).slice_rows(j * t, (j + 1) * t));
}

Tensor Model::embed(const StepBatch& step, ForwardContext& ctx) const {
  const int64_t t = step.num_tokens(), hidden = config_.hidden_size;
  Tensor x = ctx.step_workspace.alloc(ctx.activation_dtype, {t, hidden});
  embed_tokens(parts_.embed_tokens, parts_.vocab, step.device().token_ids, x, ctx);
  if (parts_.embed_scale != 1.0f) ops::scale(x, parts_.embed_scale);
  if (step.has_image_tokens()) place_image_embeds(step, x, ctx);
  if (parts_.encoder_embeddings.defined()) parts_.encoder_embeddings.apply(step, x, ctx);
  if (parts_.embedding_norm.defined()) parts_.embedding_norm.apply(x, x);
  if (parts_.mtp_input.defined()) parts_.mtp_input.apply(step.device().input_hidden_states, x, ctx);
  if (parts_.residual_streams == 1) return x;
  Tensor streams = ctx.step_workspace.alloc(ctx.activation_dtype, {t, parts_.residual_streams * hidden});
  ops::hyper_repeat(x, streams.reshape({t, parts_.residual_streams, hidden}));
  return streams;
}

Tensor Model::forward(const StepBatch& step, ForwardContext& ctx) const {
  ctx.token_ids = step.device().token_ids;
  Tensor x = stage_input(step, ctx);
  STRATA_CHECK(ctx.aux_hidden_layers.empty() || (parts_.residual_streams == 1 && !parts_.hyper_head));
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int64_t layer = pipeline_stage_.first_layer + static_cast<int64_t>(i);
    keep_aux_hidden_state(layer, x, ctx);
    ctx.kv_layer = kv_index_[i];
    ctx.ssm_layer = ssm_index_[i];
    ctx.carry_layer = carry_index_[i];
    ctx.layer = layer;
    layers_[i]->forward(step, x, ctx);
    ctx.workspace.reset();
  }
  return stage_output(step, x, ctx);
}

Tensor Model::head_output(const StepBatch& step, const Tensor& x_in, ForwardContext& ctx) const {
  const int64_t hidden = config_.hidden_size;
  Tensor x = x_in;
  const int64_t num_logits = step.num_logits();
  if (parts_.classifier_reads_mean) x = sequence_means(step, x, ctx);
  Tensor last = normed_output_rows(step, x, ctx);
  if (parts_.final_layer_norm.defined() && !parts_.classifier_reads_mean) parts_.final_layer_norm.apply(last, last);
  if (config_.head() == ModelHead::kHiddenStates) {
    if (last.dtype() == DType::kF32) return last;
    Tensor hidden_f32 = ctx.step_workspace.alloc(DType::kF32, {num_logits, hidden});
    if (num_logits > 0) ops::convert(last, hidden_f32);
    return hidden_f32;
  }
  Tensor logits = ctx.step_workspace.alloc(DType::kF32, {num_logits, output_width()});
  if (num_logits == 0) return logits;
  if (parts_.classifier_pooler.defined()) {
    Tensor pooled = ctx.step_workspace.alloc(ctx.activation_dtype, {num_logits, hidden});
    ops::linear(last, parts_.classifier_pooler, parts_.classifier_pooler_bias, pooled);
    ops::activation(pooled, pooled, parts_.classifier_pooler_activation);
    if (parts_.classifier_pooler_norm.defined()) parts_.classifier_pooler_norm.apply(pooled, pooled);
    last = pooled;
  }
  lm_head_logits(last, parts_.lm_head, parts_.lm_head_bias, parts_.vocab, logits, ctx);
  return logits;
}

}  // namespace strata
