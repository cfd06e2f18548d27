// Model's part under pipeline parallelism (declared in model.h): keeping one stage's layers, and
// where a stage's forward takes its input from and hands its output to.
#include <algorithm>
#include <limits>

#include "strata/core/error.h"
#include "strata/model/model.h"
#include "strata/model/pipeline_links.h"
#include "strata/ops/elementwise.h"

namespace strata {

void Model::check_pipeline_split(const PipelineStage& stage) const {
  const std::string what = fmt::format("{} runs with --pipeline-parallel-size 1 for now", config_.model_type);
  if (vision_tower_ || parts_.residual_streams > 1 || parts_.mtp_input.defined() || parts_.eagle3.defined() ||
      !causal() || config_.head() != ModelHead::kLanguageModel)
    fail("this model's {} does not split into pipeline stages yet: {}",
         vision_tower_ ? "vision tower" : "input or output stage", what);
  if (stage.end_layer > num_layers() || (stage.is_last() && stage.end_layer != num_layers()))
    fail("{} builds {} layers, not the {} of num_hidden_layers that the pipeline stages were dealt from: {}",
         config_.model_type, num_layers(), config_.num_hidden_layers, what);
  // Stage 0's runner hands out the SSM slots that every stage's rows name.
  const PipelineStage first = strata::pipeline_stage(num_layers(), 0, stage.count);
  bool recurrent = false, first_recurrent = false;
  for (int64_t l = 0; l < num_layers(); ++l) {
    const bool has_state = ssm_index_[l] >= 0 || carry_index_[l] >= 0;
    recurrent = recurrent || has_state;
    first_recurrent = first_recurrent || (has_state && first.holds_layer(l));
  }
  if (recurrent && !first_recurrent)
    fail("pipeline stage 0 (layers {} to {}) would hold no recurrent layer of this hybrid model, and stage 0 hands "
         "out the recurrent state slots: choose a --pipeline-parallel-size that gives stage 0 one",
         first.first_layer, first.end_layer - 1);
}

void Model::set_pipeline_stage(const PipelineStage& stage) {
  check_pipeline_split(stage);
  std::vector<std::unique_ptr<Layer>> layers = std::move(layers_);
  std::vector<std::string> descriptions = std::move(descriptions_);
  layers_.clear(), descriptions_.clear(), caps_.clear(), ssm_shapes_.clear();
  kv_index_.clear(), ssm_index_.clear(), carry_index_.clear();
  num_kv_layers_ = 0;
  for (int64_t l = stage.first_layer; l < stage.end_layer; ++l) add_layer(std::move(layers[l]), std::move(descriptions[l]));
  if (!stage.is_first()) parts_.embed_tokens = Tensor();  // a tied lm_head keeps its own reference
  if (!stage.is_last()) {
    parts_.final_norm = RmsNorm();
    parts_.lm_head = Tensor();
  }
  pipeline_stage_ = stage;
}

Tensor Model::stage_input(const StepBatch& step, ForwardContext& ctx) const {
  const int64_t num_aux = static_cast<int64_t>(ctx.aux_hidden_layers.size());
  if (num_aux > 0)
    ctx.aux_hidden_states =
        ctx.step_workspace.alloc(ctx.activation_dtype, {num_aux, step.num_tokens(), config_.hidden_size});
  if (pipeline_stage_.is_first()) return embed(step, ctx);
  STRATA_CHECK_MSG(ctx.pipeline != nullptr, "pipeline stage {} runs without its links", pipeline_stage_.index);
  Tensor x = receive_rows(*ctx.pipeline->from_previous, ctx.activation_dtype, {step.num_tokens(), config_.hidden_size},
                          ctx.step_workspace);
  receive_aux_rows_before(pipeline_stage_.first_layer, step, ctx);
  return x;
}

namespace {

// Rows [count * T, hidden] of ctx.aux_hidden_states: those of the aux layers before `layer`
// (undefined when none).
Tensor aux_rows_before(int64_t layer, int64_t num_tokens, const ForwardContext& ctx) {
  const auto& layers = ctx.aux_hidden_layers;
  const int64_t count = std::lower_bound(layers.begin(), layers.end(), layer) - layers.begin();
  if (count == 0 || num_tokens == 0) return Tensor();
  const Tensor& all = ctx.aux_hidden_states;
  return all.reshape({all.dim(0) * num_tokens, all.dim(2)}).slice_rows(0, count * num_tokens);
}

}  // namespace

// An EAGLE-3 head's aux rows travel forward with the activations (each stage fills its layers'
// slots) and come back whole after the logits: the ring links only neighbours, so rows of a middle
// stage would pass through the later stages anyway.
void Model::send_aux_rows_before(int64_t layer, const StepBatch& step, ForwardContext& ctx) const {
  const Tensor rows = aux_rows_before(layer, step.num_tokens(), ctx);
  if (rows.defined()) send_rows(*ctx.pipeline->to_next, rows, ctx.step_workspace);
}

void Model::receive_aux_rows_before(int64_t layer, const StepBatch& step, ForwardContext& ctx) const {
  const Tensor rows = aux_rows_before(layer, step.num_tokens(), ctx);
  if (!rows.defined()) return;
  ops::convert(receive_rows(*ctx.pipeline->from_previous, ctx.activation_dtype, rows.shape(), ctx.step_workspace),
               rows);
}

// The last stage sends the logits back to stage 0, then with keep_hidden_states (an MTP module on
// stage 0 reads them) the final-normed hidden states [T, hidden], with aux layers their rows.
Tensor Model::stage_output(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  const int64_t num_logits = step.num_logits(), num_tokens = step.num_tokens();
  const bool hidden_back = ctx.keep_hidden_states && pipeline_stage_.count > 1 && num_tokens > 0;
  if (pipeline_stage_.is_last()) {
    Tensor out = head_output(step, x, ctx);
    if (pipeline_stage_.count > 1 && num_logits > 0) send_rows(*ctx.pipeline->to_next, out, ctx.step_workspace);
    if (hidden_back) send_rows(*ctx.pipeline->to_next, ctx.hidden_states, ctx.step_workspace);
    if (pipeline_stage_.count > 1) send_aux_rows_before(std::numeric_limits<int64_t>::max(), step, ctx);
    return out;
  }
  if (ctx.hold_stage_output) {
    // Speculation, the one reader of aux rows, keeps one step in flight: no held step carries them.
    STRATA_CHECK(pipeline_stage_.is_first() && ctx.aux_hidden_layers.empty());
    return x;
  }
  send_rows(*ctx.pipeline->to_next, x, ctx.step_workspace);
  send_aux_rows_before(pipeline_stage_.end_layer, step, ctx);
  if (!pipeline_stage_.is_first()) return Tensor();
  return receive_stage_output(num_logits, num_tokens, ctx);
}

Tensor Model::receive_stage_output(int64_t num_logits, int64_t num_tokens, ForwardContext& ctx) const {
  STRATA_CHECK(pipeline_stage_.is_first() && pipeline_stage_.count > 1);
  Tensor logits = num_logits == 0 ? ctx.step_workspace.alloc(DType::kF32, {0, output_width()})
                                  : receive_rows(*ctx.pipeline->from_previous, DType::kF32,
                                                 {num_logits, output_width()}, ctx.step_workspace);
  if (ctx.keep_hidden_states && num_tokens > 0)
    ctx.hidden_states = receive_rows(*ctx.pipeline->from_previous, ctx.activation_dtype,
                                     {num_tokens, config_.hidden_size}, ctx.step_workspace);
  const int64_t num_aux = static_cast<int64_t>(ctx.aux_hidden_layers.size());
  if (num_aux > 0 && num_tokens > 0)
    ctx.aux_hidden_states = receive_rows(*ctx.pipeline->from_previous, ctx.activation_dtype,
                                         {num_aux * num_tokens, config_.hidden_size}, ctx.step_workspace)
                                .reshape({num_aux, num_tokens, config_.hidden_size});
  return logits;
}

}  // namespace strata
