// Model: the generic loop. embed -> every layer's forward -> final norm -> head, with outputs
// only for the token rows the step asks for. The head is the lm_head (logits), none (a pooling
// model's hidden states) or a classifier's score weight (config.head()). Encoders add position
// and token type embeddings (BERT) or a LayerNorm (ModernBERT) to the token embeddings, end in a
// LayerNorm or no norm, and may run a head before the classifier. Architectures only build the parts.
#pragma once

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "strata/core/model_config.h"
#include "strata/model/layer.h"
#include "strata/model/layers/encoder_embeddings.h"
#include "strata/model/layers/layer_norm.h"
#include "strata/model/layers/mtp_input.h"
#include "strata/model/layers/norm.h"
#include "strata/model/layers/vocab_parallel.h"
#include "strata/model/pipeline_stage.h"
#include "strata/ops/activation.h"

namespace strata {

class StreamHead;
class VisionTower;

// What makes a model an EAGLE-3 head besides its layer (layers/eagle3_block.h).
struct Eagle3Head {
  std::vector<int64_t> target_layers;    // ascending: the target layers whose inputs it reads
  std::vector<int32_t> draft_to_target;  // [draft vocab]: draft id i is target id i + d2t[i]

  bool defined() const { return !target_layers.empty(); }
};

class Model {
 public:
  struct Parts {
    Tensor embed_tokens;        // [vocab, hidden]
    float embed_scale = 1.0f;   // Gemma multiplies embeddings by sqrt(hidden)
    RmsNorm final_norm;         // [hidden]; undefined: none (post-norm encoders)
    LayerNorm final_layer_norm;  // [hidden] ModernBERT's final LayerNorm (in place of final_norm), or undefined
    EncoderEmbeddings encoder_embeddings;  // BERT: positions, token types, LayerNorm; else undefined
    LayerNorm embedding_norm;   // [hidden] ModernBERT's LayerNorm of the token embeddings, or undefined
    Tensor lm_head;             // [vocab, hidden]; the embedding when tied; [num_labels, hidden]
                                // for a classifier; undefined for hidden states
    Tensor lm_head_bias;        // [num_labels] a classifier's bias, or undefined
    // Under tensor parallelism (decoder_parts): the rows of embed_tokens and lm_head this rank
    // holds, [vocab.num_rows(), hidden] each; by default the whole tables.
    VocabShard vocab;
    std::function<Tensor()> whole_embed_tokens;  // split: loads the whole table (whole_table_loader)
    // The head before a classifier: norm(act(x W^T + b)), [hidden, hidden] and [hidden] (bias may be
    // undefined); BERT's pooler is tanh without norm, ModernBERT's head GELU and a LayerNorm.
    Tensor classifier_pooler, classifier_pooler_bias;
    ops::Activation classifier_pooler_activation = ops::Activation::kTanh;
    LayerNorm classifier_pooler_norm;  // [hidden] or undefined
    // ModernBERT's classifier_pooling "mean": each row's head reads the mean of its sequence's final
    // hidden states (an encoder's step rows are whole sequences), so any pooling of the scores agrees.
    bool classifier_reads_mean = false;
    // A multi-token-prediction module's input stage (embedding and hidden state joined); the
    // step then carries device().input_hidden_states. Undefined for every other model.
    MtpInput mtp_input;
    // An EAGLE-3 head; its kept hidden states are those before the final norm, which chained
    // drafts feed back. Undefined for every other model.
    Eagle3Head eagle3;
    // > 1: the residual is this many streams, [T, streams * hidden] (DeepSeek-V4's mHC,
    // Qwen4-Exp's hyper-connections): the embedding enters every stream and the stream head
    // collapses them before the final norm (if any).
    int64_t residual_streams = 1;
    std::shared_ptr<const StreamHead> hyper_head;
    // Layers keep per-token state of their own in f32 KV-cache rows (DeepSeek-V4, Qwen4-Exp's
    // QSA): the cache is f32 on every backend, and an fp8 cache is refused when the runner is made.
    bool kv_cache_rows_f32 = false;
    int64_t kv_cache_heads = 0;     // heads and width of a KV-cache entry; 0: the config's
    int64_t kv_cache_head_dim = 0;  // num_key_value_heads and head_dim (MLA stores more)
  };
  // Throws an Error when the parts do not give config.head() (an architecture whose builder
  // sets its own lm_head cannot be a pooling model).
  Model(ModelConfig config, Parts parts);
  ~Model();

  // Multimodal checkpoints: the tower that turns images into embeddings for the placeholder
  // tokens (null: the model takes text only).
  void set_vision_tower(std::unique_ptr<VisionTower> tower);
  const VisionTower* vision_tower() const { return vision_tower_.get(); }

  void add_layer(std::unique_ptr<Layer> layer, std::string description);

  // Outputs [step.num_logits(), output_width()] f32 on the model's device (from step_workspace):
  // logits, hidden states or classifier scores.
  Tensor forward(const StepBatch& step, ForwardContext& ctx) const;
  // vocab_size, hidden_size or num_labels, by config().head().
  int64_t output_width() const;

  const ModelConfig& config() const { return config_; }
  // The weights an MTP module shares with its target (embedding, lm_head).
  const Parts& parts() const { return parts_; }
  int64_t num_layers() const { return static_cast<int64_t>(layers_.size()); }
  const LayerCaps& caps(int64_t layer) const { return caps_[layer]; }
  int64_t num_kv_layers() const { return num_kv_layers_; }
  int64_t kv_cache_heads() const {
    if (parts_.kv_cache_heads > 0) return parts_.kv_cache_heads;
    // More ranks than key/value heads: each rank keeps a copy of the one its query heads read.
    return std::max<int64_t>(1, config_.num_key_value_heads / tensor_parallel_size_);
  }
  // Built from sharded weights (ModelWeightsOptions::shard): each rank's layers hold 1/size of the
  // heads and columns, its KV cache 1/size of the heads. Throws an Error naming the first part
  // that does not split.
  void set_tensor_parallel_size(int64_t size);
  int64_t tensor_parallel_size() const { return tensor_parallel_size_; }
  // Built from the weights of one pipeline stage (ModelWeightsOptions::pipeline): keeps that
  // stage's layers (the others were built without data), the embedding on the first stage and
  // the final norm and head on the last. The forward then takes its input from the previous stage
  // and hands its output on (ForwardContext::pipeline). Throws an Error for what does not split.
  void set_pipeline_stage(const PipelineStage& stage);
  const PipelineStage& pipeline_stage() const { return pipeline_stage_; }
  // Stage 0 of several: what the last stage sends back for a step of num_tokens tokens, the
  // logits [num_logits, output_width()] f32 (and with ctx.keep_hidden_states, ctx.hidden_states).
  Tensor receive_stage_output(int64_t num_logits, int64_t num_tokens, ForwardContext& ctx) const;
  int64_t kv_cache_head_dim() const { return parts_.kv_cache_head_dim > 0 ? parts_.kv_cache_head_dim : config_.head_dim; }
  // Recurrent states in the SSM pool: mixers' states and layers' carries, in pool order.
  int64_t num_ssm_layers() const { return static_cast<int64_t>(ssm_shapes_.size()); }
  const std::vector<SsmLayerShape>& ssm_layer_shapes() const { return ssm_shapes_; }
  // false: some layer attends both ways (encoders): the engine runs prompts whole, never
  // chunked, and without prefix caching.
  bool causal() const;
  // Token types the model embeds (BERT's segments of a pair input); 0: none.
  int64_t num_token_types() const { return parts_.encoder_embeddings.num_token_types(); }
  // One line per layer ("attention + mlp", ...), for `strata info`.
  const std::vector<std::string>& layer_plan() const { return descriptions_; }

 private:
  void place_image_embeds(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
  Tensor sequence_means(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
  // Before layer i: x [T, hidden] into ctx.aux_hidden_states (made by stage_input) when i is one
  // of ctx.aux_hidden_layers.
  void keep_aux_hidden_state(int64_t layer, const Tensor& x, ForwardContext& ctx) const;
  // Under stages: the rows of the aux layers before `layer` [count * T, hidden] (to or from a link).
  void send_aux_rows_before(int64_t layer, const StepBatch& step, ForwardContext& ctx) const;
  void receive_aux_rows_before(int64_t layer, const StepBatch& step, ForwardContext& ctx) const;
  // The final-normed rows the head reads [num_logits, hidden] (and, when the context keeps
  // them, every token's in ctx.hidden_states).
  Tensor normed_output_rows(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
  // The embeddings of the step's tokens, repeated over the residual streams: [T, streams * hidden].
  Tensor embed(const StepBatch& step, ForwardContext& ctx) const;
  // [T, hidden] the first layer's input: the embeddings, or what the previous pipeline stage sent
  // (then also the aux layers' rows it filled; ctx.aux_hidden_states is made here).
  Tensor stage_input(const StepBatch& step, ForwardContext& ctx) const;
  // What forward returns: the head's outputs on the last stage (sent back to stage 0 too), the
  // last stage's outputs on stage 0, undefined on the stages between.
  Tensor stage_output(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
  // The final norm and head over the last layer's x: [num_logits, output_width()] f32.
  Tensor head_output(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const;
  // Throws an Error when `stage` cannot run this model (parts that do not split, a recurrent
  // model whose stage 0 would hold no recurrent layer).
  void check_pipeline_split(const PipelineStage& stage) const;

  ModelConfig config_;
  Parts parts_;
  std::unique_ptr<VisionTower> vision_tower_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<LayerCaps> caps_;
  std::vector<int64_t> kv_index_, ssm_index_, carry_index_;  // per layer; -1 when unused
  std::vector<SsmLayerShape> ssm_shapes_;
  std::vector<std::string> descriptions_;
  int64_t num_kv_layers_ = 0;
  int64_t tensor_parallel_size_ = 1;
  PipelineStage pipeline_stage_;
};

}  // namespace strata
