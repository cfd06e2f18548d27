#include "strata/model/layers/layer_norm.h"

#include "strata/core/error.h"

namespace strata {

LayerNorm load_layer_norm(const WeightScope& w, const std::string& name, int64_t dim, double eps) {
  if (!w.device().is_cpu())
    fail("{}: LayerNorm with bias (encoder models such as BERT) runs on the CPU only; serve this model with "
         "--device cpu", w.name(name));
  return {.weight = w.get_f32(name + ".weight", {dim}), .bias = w.get_f32(name + ".bias", {dim}),
          .eps = static_cast<float>(eps)};
}

}  // namespace strata
