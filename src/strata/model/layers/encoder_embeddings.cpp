#include "strata/model/layers/encoder_embeddings.h"

#include "strata/ops/elementwise.h"
#include "strata/ops/embedding.h"

namespace strata {

namespace {

// `name` [rows, hidden] as f32 on the host (get_f32 places it on the model's device).
Tensor host_f32(const WeightScope& w, const std::string& name, const Shape& shape) {
  const Tensor t = w.get_f32(name, shape);
  return w.device().is_cpu() || t.data() == nullptr ? t : w.weights().backend().to_host(t);
}

}  // namespace

EncoderEmbeddings load_encoder_embeddings(const ModelConfig& config, const WeightScope& w) {
  const int64_t hidden = config.hidden_size, num_types = config.get_int("type_vocab_size", 2);
  EncoderEmbeddings e{.norm = load_layer_norm(w, "LayerNorm", hidden, config.get_double("layer_norm_eps", 1e-12))};
  Tensor positions = host_f32(w, "position_embeddings.weight", {config.max_position_embeddings, hidden});
  Tensor types = host_f32(w, "token_type_embeddings.weight", {num_types, hidden});  // tables of their own
  e.positions_with_type0 = positions, e.type_offsets = types;
  if (types.data() == nullptr) return e;  // shapes only (`strata info`)
  float* p = positions.data_as<float>();
  float* t = types.data_as<float>();
  for (int64_t row = 0; row < config.max_position_embeddings; ++row)
    for (int64_t j = 0; j < hidden; ++j) p[row * hidden + j] += t[j];
  for (int64_t type = num_types - 1; type >= 0; --type)  // row 0 last: the others subtract it first
    for (int64_t j = 0; j < hidden; ++j) t[type * hidden + j] -= t[j];
  if (w.device().is_cpu()) return e;
  e.positions_with_type0 = w.weights().backend().from_host(positions);
  e.type_offsets = w.weights().backend().from_host(types);
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
