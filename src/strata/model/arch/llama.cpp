// Llama (1, 2, 3.x) and the many checkpoints that share its layout (SmolLM, Mistral-style
// dense models): attention without q/k norm, SwiGLU MLP, optional attention/mlp biases.
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"

namespace strata {

std::unique_ptr<Model> build_llama(const ModelConfig& config, const ModelWeights& weights) {
  return build_dense_decoder(config, weights, {});
}

}  // namespace strata
