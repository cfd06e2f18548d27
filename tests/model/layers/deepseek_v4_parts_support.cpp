#include "model/layers/deepseek_v4_parts_support.h"

#include "strata/core/error.h"
#include "test_support.h"

namespace strata::test {

DeepseekV4Parts::DeepseekV4Parts()
    : backend(make_cpu_backend(2)),
      source(SafetensorsSource::open(fixture_path("hf/deepseek_v4/model.safetensors"))),
      reference(SafetensorsSource::open(fixture_path("hf/deepseek_v4/parts_reference.safetensors"))),
      weights(std::make_unique<ModelWeights>(source.get(), *backend, ModelWeightsOptions{})) {}

MoeFfn deepseek_v4_fixture_moe(const ModelWeights& weights, int layer) {
  const bool hash = layer == 1;
  const MoeOptions options{.hidden_size = 64, .intermediate_size = 32, .num_experts = 8,
                           .route = {.top_k = 2, .scoring = ops::MoeScoring::kSqrtSoftplus, .norm_topk_prob = true,
                                     .routed_scaling_factor = 1.5f},
                           .shared_intermediate_size = 32, .correction_bias = !hash, .swiglu_limit = 0.3f,
                           .hash_vocab_size = hash ? 512 : 0};
  MoeWeightNames names = mixtral_moe_names();
  names.shared_expert = "shared_experts";
  names.shared_expert_mlp = {.gate = "w1", .up = "w3", .down = "w2"};
  names.correction_bias = "gate.bias";
  return MoeFfn(options, WeightScope(weights, "model.layers." + std::to_string(layer) + ".ffn"), names);
}

Tensor DeepseekV4Parts::reference_tensor(const std::string& name) const {
  const WeightInfo* info = reference->find(name);
  STRATA_CHECK_MSG(info != nullptr, "parts_reference.safetensors has no {}", name);
  return Tensor::view(const_cast<void*>(info->data), info->dtype, info->shape);
}

}  // namespace strata::test
