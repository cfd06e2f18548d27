#include "strata/model/model_loader.h"

#include <filesystem>

#include "strata/core/error.h"
#include "strata/model/arch/builders.h"
#include "strata/model/registry.h"
#include "strata/weights/fp8_source.h"
#include "strata/weights/gguf_config.h"
#include "strata/weights/gguf_source.h"
#include "strata/weights/prefixed_source.h"
#include "strata/weights/safetensors_source.h"

namespace strata {

LoadFormat parse_load_format(const std::string& name) {
  if (name == "auto") return LoadFormat::kAuto;
  if (name == "dummy") return LoadFormat::kDummy;
  fail("--load-format '{}' is not supported; use auto or dummy", name);
}

namespace {

// Fills config and source from a .gguf file.
void open_gguf(const std::filesystem::path& path, LoadedModel& loaded) {
  if (path.extension() != ".gguf")
    fail("model path '{}' is a file but not a .gguf; give a .gguf or a folder with config.json",
         path.string());
  auto file = std::make_shared<const GgufFile>(path.string());
  loaded.config = ModelConfig::from_json(gguf_to_hf_config(*file));
  loaded.source = std::make_unique<GgufSource>(file);
}

// Fills config and source (none for dummy weights) from a Hugging Face folder.
void open_folder(const std::filesystem::path& path, LoadFormat format, LoadedModel& loaded) {
  const std::filesystem::path config_path = path / "config.json";
  if (!std::filesystem::exists(config_path)) fail("'{}' has no config.json", path.string());
  loaded.config = ModelConfig::from_file(config_path.string());
  if (format == LoadFormat::kDummy) return;
  if (!has_safetensors(path.string()))
    fail("'{}' has no model.safetensors or model.safetensors.index.json; "
         "pass --load-format dummy for random weights", path.string());
  loaded.source = SafetensorsSource::open(path.string());
}

// Bytes the load will count: the source's tensors, or (dummy weights) a shapes-only build's.
int64_t expected_weight_bytes(const LoadedModel& loaded) {
  int64_t total = 0;
  if (loaded.source) {
    for (const std::string& name : loaded.source->names()) {
      const WeightInfo* info = loaded.source->find(name);
      if (info != nullptr) total += dtype_bytes(info->dtype, info->shape.numel());
    }
    return total;
  }
  auto cpu = make_cpu_backend(1);
  ModelWeights shapes(nullptr, *cpu, {.dummy_dtype = loaded.config.dtype, .shapes_only = true});
  build_model(loaded.config, shapes);
  return shapes.num_bytes();
}

}  // namespace

LoadedModel load_model(const LoadOptions& options, Backend& backend) {
  const std::filesystem::path path(options.model_path);
  if (!std::filesystem::exists(path)) fail("model path '{}' does not exist", options.model_path);
  LoadedModel loaded;
  if (std::filesystem::is_directory(path)) {
    open_folder(path, options.load_format, loaded);
  } else {
    open_gguf(path, loaded);
  }
  loaded.config.pooler = resolve_pooler_config(options.model_path, loaded.config, options.pooling);
  if (loaded.source && lacks_model_prefix(*loaded.source))
    loaded.source = std::make_unique<PrefixedWeightSource>(std::move(loaded.source), "model.");
  if (loaded.source) {
    std::optional<Fp8SourceOptions> fp8 = fp8_checkpoint_options(loaded.config.raw);
    if (options.quantization == WeightQuantization::kFp8) {
      if (!fp8) fp8.emplace();
      fp8->quantize = true;
    }
    if (fp8) loaded.source = std::make_unique<Fp8WeightSource>(std::move(loaded.source), *fp8);
  }
  const PipelineStage stage =
      options.pipeline_parallel_size == 1
          ? PipelineStage{}
          : pipeline_stage(loaded.config.num_hidden_layers, options.pipeline_stage, options.pipeline_parallel_size);
  if (options.progress != nullptr) options.progress->start(expected_weight_bytes(loaded));
  loaded.weights = std::make_unique<ModelWeights>(
      loaded.source.get(), backend,
      ModelWeightsOptions{.dummy_dtype = loaded.config.dtype, .seed = options.dummy_seed,
                          .shapes_only = options.shapes_only, .quantization = options.quantization,
                          .progress = options.progress, .shard = options.shard, .pipeline = stage,
                          .tie_word_embeddings = loaded.config.tie_word_embeddings});
  loaded.model = build_model(loaded.config, *loaded.weights);
  if (options.shard.size > 1) loaded.model->set_tensor_parallel_size(options.shard.size);
  if (stage.count > 1) loaded.model->set_pipeline_stage(stage);
  if (options.progress != nullptr) options.progress->finish();
  loaded.weights->stop_progress();  // the reporter is the caller's; later loads (an MTP module) go unreported
  return loaded;
}

LoadedModel load_eagle3_head(const std::string& path, const Model& target, Backend& backend, LoadFormat format) {
  if (!std::filesystem::is_directory(path))
    fail("--speculative-config: the EAGLE-3 head '{}' is not a folder; give the head's folder (config.json and "
         "model.safetensors) as 'model'", path);
  LoadedModel loaded;
  try {
    open_folder(path, format, loaded);
    loaded.weights = std::make_unique<ModelWeights>(loaded.source.get(), backend,
                                                    ModelWeightsOptions{.dummy_dtype = loaded.config.dtype});
    loaded.model = build_eagle3_head(loaded.config, *loaded.weights, target);
  } catch (const Error& e) {
    fail("--speculative-config: the EAGLE-3 head '{}' cannot serve this model: {}", path, e.what());
  }
  return loaded;
}

LoadedModel load_mtp_module(const LoadedModel& target) {
  LoadedModel mtp;
  mtp.config = target.config;
  // Unsplit, the module shares the target's weights; split (over ranks or stages), it reads its own
  // whole copy.
  if (target.weights->shard().size > 1 || target.weights->pipeline().count > 1) mtp.weights = target.weights->unsplit();
  mtp.model = build_mtp_module(*target.model, mtp.weights ? *mtp.weights : *target.weights);
  return mtp;
}

}  // namespace strata
