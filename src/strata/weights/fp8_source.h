// Fp8WeightSource: a WeightSource over another that serves FP8 weights in Strata's form
// (kF8_E4M3_B128, weights/fp8.h). FP8 checkpoint tensors are joined with their scales
// (`weight_scale_inv` block scales, compressed-tensors `weight_scale` per channel or tensor),
// which it hides; with `quantize` it also quantizes every fp8_quantizable float weight.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "strata/weights/weight_source.h"

namespace strata {

struct Fp8SourceOptions {
  bool quantize = false;    // --quantization fp8: float weights of linears quantized at load
  int64_t block_rows = 128;  // the checkpoint's weight_block_size (rows, columns)
  int64_t block_cols = 128;
};

// From config.json: options for an FP8 checkpoint (quant_method "fp8", or compressed-tensors
// with 8-bit float weights); nullopt without quantization_config or for MXFP4 (gpt-oss reads
// its experts itself); throws Error naming any other scheme.
std::optional<Fp8SourceOptions> fp8_checkpoint_options(const nlohmann::json& config);

class Fp8WeightSource final : public WeightSource {
 public:
  Fp8WeightSource(std::unique_ptr<WeightSource> inner, Fp8SourceOptions options);

  const WeightInfo* find(std::string_view name) const override;
  std::vector<std::string> names() const override;
  std::string description() const override;

 private:
  struct Converted {
    WeightInfo info;
    Tensor data;  // owned host memory behind info.data
  };
  const WeightInfo& scaled_checkpoint_weight(const WeightInfo& weight) const;
  const WeightInfo& quantized_weight(const WeightInfo& weight) const;
  const WeightInfo& keep(const WeightInfo& weight, Tensor data) const;

  std::unique_ptr<WeightSource> inner_;
  Fp8SourceOptions options_;
  mutable std::mutex mutex_;  // layers may load in parallel
  mutable std::map<std::string, Converted, std::less<>> converted_;
};

}  // namespace strata
