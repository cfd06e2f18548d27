// Qwen4-Exp (qwen4_exp; text-only checkpoints qwen4_exp_text): Qwen3.5-MoE's DeltaNet and MoE
// layers over gated hyper-connection streams (hc_count), per-layer n-gram embeddings on the
// ple_layer_ids layers, and QSA sparse attention on the others (layers/qsa_attention.h; decision
// 0020 for where each carry lives). No final norm: the hyper-connection mixer feeds the lm_head.
// Both backends (bf16 streams on a GPU, f32 cache rows). The vision tower is not read (text only).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/arch/qwen3_next.h"
#include "strata/model/arch/qwen4_exp_config.h"
#include "strata/model/layers/attention.h"
#include "strata/model/layers/gated_residual_block.h"
#include "strata/model/layers/qsa_attention.h"

namespace strata {
namespace {

void log_unread_parts(const ModelConfig& config, const ModelWeights& weights) {
  if (!weights.is_dummy() && !weights.names_under("model.visual.").empty())
    spdlog::info("{}: the vision tower (model.visual.*) is not read; Strata serves Qwen4-Exp as a text model",
                 config.model_type);
}

std::unique_ptr<PerLayerEmbedding> make_ple(const ModelConfig& config, const Qwen4ExpConfig& q4, int64_t layer,
                                            const WeightScope& w) {
  if (q4.ple_index[layer] < 0) return nullptr;
  const Qwen4ExpPleConfig& ple = q4.ple_layers[q4.ple_index[layer]];
  return std::make_unique<PerLayerEmbedding>(
      PerLayerEmbeddingOptions{.num_streams = q4.hc_count, .hidden_size = config.hidden_size,
                               .embed_dim = ple.embed_dim, .conv_kernel = ple.conv_kernel,
                               .table_rows = ple.table_rows, .split_parts = ple.split_parts,
                               .rms_norm_eps = static_cast<float>(config.rms_norm_eps), .hash = ple.hash},
      w.scope("ple"));
}

std::unique_ptr<Mixer> make_mixer(const ModelConfig& config, const Qwen4ExpConfig& q4, int64_t layer,
                                  const WeightScope& w) {
  if (!q4.full_attention[layer]) return gated_deltanet_mixer(config, w, /*split=*/true, q4.output_gate);
  const Qwen4ExpQsaConfig& qsa = q4.qsa;
  return std::make_unique<QsaAttention>(gated_attention_options(config),
                                        QsaOptions{.index_heads = qsa.index_heads, .index_head_dim = qsa.index_head_dim,
                                                   .budget = qsa.budget, .compress_ratio = qsa.compress_ratio},
                                        w.scope("self_attn"));
}

// The layer plan line: the mixer, the feed-forward and the per-sequence state each carries.
std::string describe(const Qwen4ExpConfig& q4, int64_t layer) {
  const std::string mixer = q4.full_attention[layer]
                                ? fmt::format("qsa attention (blocks of {}, budget {}; KV + index rows)",
                                              q4.qsa.compress_ratio, q4.qsa.budget)
                                : "gated_deltanet (ssm state)";
  const std::string ple = q4.ple_index[layer] >= 0 ? "ple (n-gram + conv carry) + " : "";
  return fmt::format("hc{} {}{} + moe", q4.hc_count, ple, mixer);
}

}  // namespace

std::unique_ptr<Model> build_qwen4_exp(const ModelConfig& config, const ModelWeights& weights) {
  if (config.head() != ModelHead::kLanguageModel) fail("Qwen4-Exp is served as a language model only");
  const Qwen4ExpConfig q4 = Qwen4ExpConfig::read(config);
  log_unread_parts(config, weights);
  const std::string prefix = qwen3_5_text_prefix(config, weights);
  const GatedResidualOptions hc{.num_streams = q4.hc_count, .hidden_size = config.hidden_size,
                                .lowrank = q4.hc_lowrank, .rms_norm_eps = static_cast<float>(config.rms_norm_eps)};
  Model::Parts parts = decoder_parts(config, weights, {.embed_tokens = prefix + ".embed_tokens.weight", .final_norm = ""});
  parts.residual_streams = q4.hc_count;
  parts.hyper_head = std::make_shared<GatedResidual>(hc, WeightScope(weights, prefix + ".hyper_connection_mixer"),
                                                     /*inject=*/false);
  const auto [kv_begin, kv_end] = kv_head_range(weights.shard(), config.num_key_value_heads);
  parts.kv_cache_heads = kv_end - kv_begin + 1;  // this rank's heads; the last holds the QSA index rows
  parts.kv_cache_rows_f32 = true;
  auto model = std::make_unique<Model>(config, std::move(parts));
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightScope w(weights, fmt::format("{}.layers.{}", prefix, i));
    model->add_layer(std::make_unique<GatedResidualBlock>(GatedResidualBlock::Parts{
                         .hidden_size = config.hidden_size,
                         .ple = make_ple(config, q4, i, w),
                         .mixer_hc = std::make_unique<GatedResidual>(hc, w.scope("attn_hyper_connection"), true),
                         .mixer = make_mixer(config, q4, i, w),
                         .ffn_hc = std::make_unique<GatedResidual>(hc, w.scope("mlp_hyper_connection"), true),
                         .ffn = qwen3_5_moe_ffn(config, w.scope("mlp")).ffn,
                     }),
                     describe(q4, i));
  }
  return model;
}

}  // namespace strata
