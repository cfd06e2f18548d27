// A WeightSource over tensors held in memory, served by name: hand-built checkpoints (FP8 codes
// and scales, block-quantized experts) for tests that need no file.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "strata/weights/weight_source.h"

namespace strata::test {

class MemorySource final : public WeightSource {
 public:
  void add(const std::string& name, Tensor t) {
    tensors_[name] = t;
    infos_[name] = {.name = name, .dtype = t.dtype(), .shape = t.shape(), .data = t.data(), .file = "memory"};
  }
  const WeightInfo* find(std::string_view name) const override {
    const auto it = infos_.find(std::string(name));
    return it == infos_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& [name, info] : infos_) out.push_back(name);
    return out;
  }
  std::string description() const override { return "memory"; }

 private:
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, WeightInfo> infos_;
};

}  // namespace strata::test
