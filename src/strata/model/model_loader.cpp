#include "strata/model/model_loader.h"

#include <filesystem>

#include "strata/core/error.h"
#include "strata/model/registry.h"
#include "strata/weights/safetensors_source.h"

namespace strata {

LoadFormat parse_load_format(const std::string& name) {
  if (name == "auto") return LoadFormat::kAuto;
  if (name == "dummy") return LoadFormat::kDummy;
  fail("--load-format '{}' is not supported; use auto or dummy", name);
}

LoadedModel load_model(const LoadOptions& options, Backend& backend) {
  namespace fs = std::filesystem;
  const fs::path path(options.model_path);
  if (!fs::exists(path)) fail("model path '{}' does not exist", options.model_path);
  LoadedModel loaded;
  if (!fs::is_directory(path))
    fail("model path '{}' is a file; give a folder with config.json", options.model_path);
  const fs::path config_path = path / "config.json";
  if (!fs::exists(config_path)) fail("'{}' has no config.json", options.model_path);
  loaded.config = ModelConfig::from_file(config_path.string());
  if (options.load_format == LoadFormat::kAuto) {
    if (!has_safetensors(path.string()))
      fail("'{}' has no model.safetensors or model.safetensors.index.json; "
           "pass --load-format dummy for random weights", options.model_path);
    loaded.source = SafetensorsSource::open(path.string());
  }
  loaded.weights = std::make_unique<ModelWeights>(loaded.source.get(), backend, loaded.config.dtype,
                                                  options.dummy_seed, options.shapes_only);
  loaded.model = build_model(loaded.config, *loaded.weights);
  return loaded;
}

}  // namespace strata
