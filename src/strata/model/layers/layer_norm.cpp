#include "strata/model/layers/layer_norm.h"

namespace strata {

LayerNorm load_layer_norm(const WeightScope& w, const std::string& name, int64_t dim, double eps) {
  // Checkpoints converted from the original BERT name them gamma and beta (transformers renames
  // them at load).
  const bool legacy = !w.weights().names_under(w.name(name + ".gamma")).empty();
  return {.weight = w.get_f32(name + (legacy ? ".gamma" : ".weight"), {dim}),
          .bias = w.get_f32(name + (legacy ? ".beta" : ".bias"), {dim}), .eps = static_cast<float>(eps)};
}

}  // namespace strata
