#include "strata/model/layers/layer_norm.h"

namespace strata {

LayerNorm load_layer_norm(const WeightScope& w, const std::string& name, int64_t dim, double eps) {
  return {.weight = w.get_f32(name + ".weight", {dim}), .bias = w.get_f32(name + ".bias", {dim}),
          .eps = static_cast<float>(eps)};
}

}  // namespace strata
