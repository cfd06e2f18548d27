// Qwen2: a Llama-style decoder whose q, k and v projections always carry biases.
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"

namespace strata {

std::unique_ptr<Model> build_qwen2(const ModelConfig& config, const ModelWeights& weights) {
  return build_dense_decoder(config, weights, {.qkv_bias = true});
}

}  // namespace strata
