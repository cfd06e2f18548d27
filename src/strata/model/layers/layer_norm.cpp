#include "strata/model/layers/layer_norm.h"

#include <algorithm>

namespace strata {

namespace {

// [dim] f32 zeros on the model's device.
Tensor zero_bias(const WeightScope& w, int64_t dim) {
  Tensor zeros = Tensor::host(DType::kF32, {dim});
  std::fill_n(zeros.data_as<float>(), dim, 0.0f);
  return w.device().is_cpu() ? zeros : w.weights().backend().from_host(zeros);
}

}  // namespace

LayerNorm load_layer_norm(const WeightScope& w, const std::string& name, int64_t dim, double eps, bool has_bias) {
  if (!has_bias)
    return {.weight = w.get_f32(name + ".weight", {dim}), .bias = zero_bias(w, dim), .eps = static_cast<float>(eps)};
  // Checkpoints converted from the original BERT name them gamma and beta (transformers renames
  // them at load).
  const bool legacy = !w.weights().names_under(w.name(name + ".gamma")).empty();
  return {.weight = w.get_f32(name + (legacy ? ".gamma" : ".weight"), {dim}),
          .bias = w.get_f32(name + (legacy ? ".beta" : ".bias"), {dim}), .eps = static_cast<float>(eps)};
}

}  // namespace strata
