#include "strata/model/sentence_dense.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/ops/cpu/convert.h"
#include "strata/weights/safetensors.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

DenseActivation parse_dense_activation(const std::string& name, const std::string& file) {
  const std::string leaf = name.substr(name.rfind('.') + 1);  // torch.nn.modules.activation.Tanh -> Tanh
  if (leaf == "Identity") return DenseActivation::kIdentity;
  if (leaf == "Tanh") return DenseActivation::kTanh;
  if (leaf == "ReLU") return DenseActivation::kRelu;
  if (leaf == "Sigmoid") return DenseActivation::kSigmoid;
  if (leaf == "GELU") return DenseActivation::kGelu;
  fail("{}: the Dense activation_function '{}' is not supported (Identity, Tanh, ReLU, Sigmoid, GELU)", file, name);
}

// The tensor `name` of `file` widened to f32, with `numel` values.
std::vector<float> read_f32(const SafetensorsFile& file, const std::string& path, const std::string& name,
                            int64_t numel) {
  const WeightInfo* info = file.find(name);
  if (info == nullptr) fail("{} has no tensor '{}'", path, name);
  if (info->shape.numel() != numel)
    fail("{}: '{}' has {} values, but config.json's in_features and out_features make {}", path, name,
         info->shape.numel(), numel);
  std::vector<float> out(static_cast<size_t>(numel));
  cpu::widen_to_f32(info->data, info->dtype, numel, out.data());
  return out;
}

}  // namespace

PoolerDense load_sentence_dense(const std::string& dir) {
  const std::string config_path = (fs::path(dir) / "config.json").string();
  std::ifstream in(config_path);
  if (!in) fail("modules.json names a Dense module, but {} is missing", config_path);
  const nlohmann::json config = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.contains("in_features") || !config.contains("out_features"))
    fail("{} must be a JSON object with in_features and out_features", config_path);
  PoolerDense dense{.in_features = config["in_features"].get<int64_t>(),
                    .out_features = config["out_features"].get<int64_t>()};
  dense.activation = parse_dense_activation(
      config.value("activation_function", "torch.nn.modules.activation.Tanh"), config_path);
  const std::string weights_path = (fs::path(dir) / "model.safetensors").string();
  if (!fs::exists(weights_path))
    fail("{} is missing: Strata reads a Dense module's weights from safetensors only (pytorch_model.bin is not "
         "read); convert it with sentence-transformers' save (safe_serialization=True)", weights_path);
  const SafetensorsFile file(weights_path);
  dense.weight = read_f32(file, weights_path, "linear.weight", dense.in_features * dense.out_features);
  if (config.value("bias", true)) dense.bias = read_f32(file, weights_path, "linear.bias", dense.out_features);
  return dense;
}

}  // namespace strata
