// Loading a model: find its config and weights (a Hugging Face folder, a .gguf file, or a
// folder with only config.json under --load-format dummy), then build it on a backend.
#pragma once

#include <memory>
#include <string>

#include "strata/backend/backend.h"
#include "strata/model/model.h"
#include "strata/model/model_weights.h"
#include "strata/model/pooler_config.h"

namespace strata {

enum class LoadFormat : uint8_t { kAuto, kDummy };

struct LoadOptions {
  std::string model_path;  // folder with config.json, or a .gguf file
  LoadFormat load_format = LoadFormat::kAuto;
  uint64_t dummy_seed = 1234;
  bool shapes_only = false;  // weights without data: for inspecting a model's plan and size
  // --quantization: kFp8 quantizes the linears of a float checkpoint (or dummy weights) to FP8
  // at load. FP8 checkpoints load as FP8 without it.
  WeightQuantization quantization = WeightQuantization::kNone;
  PoolingFlags pooling;  // the runner (generate or pooling) and how a pooling model pools
  // Shown while weights load: started with the bytes expected, finished when the model is built.
  ProgressReporter* progress = nullptr;
  // This process's rank of a tensor-parallel group: its layers load and run their part.
  TensorShard shard;
  // This process's stage of a pipeline-parallel group of pipeline_parallel_size stages: it loads
  // and runs that stage's layers only (model/pipeline_stage.h deals them).
  int pipeline_stage = 0;
  int pipeline_parallel_size = 1;
};

struct LoadedModel {
  ModelConfig config;
  std::unique_ptr<WeightSource> source;  // null for dummy weights
  std::unique_ptr<ModelWeights> weights;
  std::unique_ptr<Model> model;
};

LoadedModel load_model(const LoadOptions& options, Backend& backend);
// The EAGLE-3 head in folder `path` (config.json + safetensors; config only with kDummy) for
// `target`, on the target's backend. Throws an Error naming the path when it is missing or
// does not fit the target.
LoadedModel load_eagle3_head(const std::string& path, const Model& target, Backend& backend,
                             LoadFormat format = LoadFormat::kAuto);
// The multi-token-prediction module of `target`'s checkpoint (speculative method mtp), whole on
// this process: a target split over tensor-parallel ranks or pipeline stages gets its module's
// layers, embedding and LM head read unsplit from the same files (rank 0 runs the module alone).
// `target` must outlive it.
LoadedModel load_mtp_module(const LoadedModel& target);
LoadFormat parse_load_format(const std::string& name);  // "auto", "dummy"

}  // namespace strata
