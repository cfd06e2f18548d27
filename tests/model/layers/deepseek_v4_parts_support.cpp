#include "model/layers/deepseek_v4_parts_support.h"

#include "strata/core/error.h"
#include "test_support.h"

namespace strata::test {

DeepseekV4Parts::DeepseekV4Parts()
    : backend(make_cpu_backend(2)),
      source(SafetensorsSource::open(fixture_path("hf/deepseek_v4/model.safetensors"))),
      reference(SafetensorsSource::open(fixture_path("hf/deepseek_v4/parts_reference.safetensors"))),
      weights(std::make_unique<ModelWeights>(source.get(), *backend, ModelWeightsOptions{})) {}

Tensor DeepseekV4Parts::reference_tensor(const std::string& name) const {
  const WeightInfo* info = reference->find(name);
  STRATA_CHECK_MSG(info != nullptr, "parts_reference.safetensors has no {}", name);
  return Tensor::view(const_cast<void*>(info->data), info->dtype, info->shape);
}

}  // namespace strata::test
