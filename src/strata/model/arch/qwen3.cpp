// Qwen3: a Llama-style decoder with RMSNorm on each query and key head.
#include "strata/model/arch/builders.h"
#include "strata/model/arch/common.h"

namespace strata {

std::unique_ptr<Model> build_qwen3(const ModelConfig& config, const ModelWeights& weights) {
  return build_dense_decoder(config, weights, {.qk_norm = true});
}

}  // namespace strata
