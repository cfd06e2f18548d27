// The Qwen3-Next layer stack, which Qwen3.5 shares (qwen3_5.cpp): Gated DeltaNet or gated
// attention (partial rotary, q/k norm, sigmoid output gate) per layer_types, zero-centred
// (1 + w) RMSNorms. The two differ in weight names, the DeltaNet's projection layout and the FFNs.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "strata/model/arch/common.h"
#include "strata/ops/gated_rms_norm.h"

namespace strata {

struct Qwen3NextFfn {
  std::unique_ptr<Ffn> ffn;
  std::string kind;  // in the layer plan: "moe", "mlp"
};

struct Qwen3NextStack {
  std::string prefix = "model";        // model.language_model in multimodal checkpoints
  bool split_gdn_projections = false;  // GatedDeltaNetOptions::split_projections (Qwen3.5)
  // The feed-forward of `layer` from its scope <prefix>.layers.<layer>.mlp.
  std::function<Qwen3NextFfn(const WeightScope& mlp, int64_t layer)> make_ffn;
};

// The gated attention's options: output gate, (1 + w) q/k norms, partial rotary (0.25 unless
// config.json names it), Qwen3.5's MRoPE sections.
AttentionOptions gated_attention_options(const ModelConfig& config);
// The Gated DeltaNet of the layer scope `w` (its linear_attn), projections split (Qwen3.5) or not;
// its gated norm's act(z) silu, or as a Qwen4-Exp config names it.
std::unique_ptr<Mixer> gated_deltanet_mixer(const ModelConfig& config, const WeightScope& w, bool split,
                                            ops::GateActivation output_gate = ops::GateActivation::kSilu);
// Where a Qwen3.5-family text model's weights live: model.language_model in multimodal
// checkpoints, else model (the checkpoint says; dummy weights follow the config).
std::string qwen3_5_text_prefix(const ModelConfig& config, const ModelWeights& weights);
// Qwen3.5's MoE feed-forward of `mlp` (top-k renormalised, a sigmoid-gated shared expert),
// experts per-expert or fused as the released checkpoints store them (qwen3_5.cpp).
Qwen3NextFfn qwen3_5_moe_ffn(const ModelConfig& config, const WeightScope& mlp);

std::unique_ptr<Model> build_qwen3_next_stack(const ModelConfig& config, const ModelWeights& weights,
                                              const Qwen3NextStack& stack);

// The checkpoint's multi-token-prediction module (mtp.*) as a model of its own: MtpInput, then
// num_nextn_predict_layers (Qwen3.5: mtp_num_hidden_layers) gated-attention layers with the
// stack's FFN, mtp.norm, and the target's embedding and lm_head (shared, not copied; read whole from
// the unsplit `weights` when the target's vocabulary is split). Throws an Error when the checkpoint
// has no mtp.* weights.
std::unique_ptr<Model> build_qwen3_next_mtp_stack(const Model& target, const ModelWeights& weights,
                                                  const Qwen3NextStack& stack);

}  // namespace strata
