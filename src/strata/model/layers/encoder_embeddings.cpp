#include "strata/model/layers/encoder_embeddings.h"

#include "strata/core/error.h"
#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"

namespace strata {

EncoderEmbeddings load_encoder_embeddings(const ModelConfig& config, const WeightScope& w) {
  const int64_t hidden = config.hidden_size, num_types = config.get_int("type_vocab_size", 2);
  if (!w.device().is_cpu())
    fail("{}: encoder models (BERT) run on the CPU backend only for now; serve this model with --device cpu",
         w.prefix());
  EncoderEmbeddings e;
  e.norm = load_layer_norm(w, "LayerNorm", hidden, config.get_double("layer_norm_eps", 1e-12));
  e.positions_with_type0 = w.get_f32("position_embeddings.weight", {config.max_position_embeddings, hidden});
  e.type_offsets = w.get_f32("token_type_embeddings.weight", {num_types, hidden});  // host f32 of its own
  if (e.type_offsets.data() == nullptr) return e;  // shapes only (`strata info`)
  float* positions = e.positions_with_type0.data_as<float>();
  float* types = e.type_offsets.data_as<float>();
  for (int64_t p = 0; p < config.max_position_embeddings; ++p)
    for (int64_t j = 0; j < hidden; ++j) positions[p * hidden + j] += types[j];
  for (int64_t t = num_types - 1; t >= 0; --t)  // row 0 last: the others subtract it first
    for (int64_t j = 0; j < hidden; ++j) types[t * hidden + j] -= types[j];
  return e;
}

void EncoderEmbeddings::apply(const StepBatch& step, const Tensor& x, ForwardContext& ctx) const {
  Tensor rows = ctx.temp(x.shape());
  ops::embedding(positions_with_type0, step.device().positions, rows);
  ops::add(x, rows);
  if (step.device().token_type_ids.defined()) {
    ops::embedding(type_offsets, step.device().token_type_ids, rows);
    ops::add(x, rows);
  }
  norm.apply(x, x);
}

}  // namespace strata
