// The DeepSeek-V4 fixture's weights on a CPU backend and its parts_reference.safetensors, for
// tests that check one part of the model (MoE, hyper-connections, attention) against transformers.
#pragma once

#include <memory>
#include <string>

#include "strata/backend/backend.h"
#include "strata/model/layers/moe.h"
#include "strata/model/model_weights.h"
#include "strata/weights/safetensors_source.h"

namespace strata::test {

struct DeepseekV4Parts {
  DeepseekV4Parts();
  // A reference tensor, viewed in place (read-only).
  Tensor reference_tensor(const std::string& name) const;

  std::unique_ptr<Backend> backend;
  std::unique_ptr<SafetensorsSource> source, reference;
  std::unique_ptr<ModelWeights> weights;
};

// The fixture's MoE block of `layer` (1: hash routed, 2: sqrt-softplus) over `weights` (either backend).
MoeFfn deepseek_v4_fixture_moe(const ModelWeights& weights, int layer);

}  // namespace strata::test
