// WeightSource: where a model's tensors come from (safetensors folder, GGUF file, dummy
// random weights). Tensors are named with Hugging Face names; a source that stores other
// names (GGUF) maps them. Returned data stays valid for the source's lifetime.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/dtype.h"
#include "strata/core/tensor.h"

namespace strata {

struct WeightInfo {
  std::string name;       // HF tensor name, e.g. "model.layers.0.self_attn.q_proj.weight"
  DType dtype = DType::kF32;
  Shape shape;            // HF order: [out_features, in_features] for linear weights
  const void* data = nullptr;  // host memory (mmap'd or owned by the source)
  std::string file;       // the file it came from, for error messages
};

class WeightSource {
 public:
  virtual ~WeightSource() = default;
  // nullptr when the source has no tensor of that name.
  virtual const WeightInfo* find(std::string_view name) const = 0;
  virtual std::vector<std::string> names() const = 0;
  // "model.safetensors (3 shards)", "smollm2.gguf", ...: for messages and `strata info`.
  virtual std::string description() const = 0;
};

}  // namespace strata
