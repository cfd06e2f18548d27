// Flags every model-running command shares (--model, --device, --threads, ...), and
// opening the backend and model they describe.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "strata/engine/model_runner.h"
#include "strata/engine/speculative_config.h"
#include "strata/lora/lora_set.h"
#include "strata/model/model_loader.h"
#include "strata/parallel/parallel_group.h"
#include "strata/text/tokenizer.h"

namespace strata::cli {

struct ModelFlags {
  std::string model;               // a path, or a Hugging Face repo id org/name[:GGUF_TAG]
  std::string revision = "main";   // the repo's branch, tag or commit when model is a repo id
  std::string load_format = "auto";
  std::string quantization = "none";  // none, or fp8: quantize a float checkpoint's linears at load
  std::string device = "auto";  // auto, cpu, cuda
  int threads = 0;              // 0: all cores
  int64_t num_kv_blocks = 0;
  double gpu_memory_utilization = 0.9;
  int64_t num_ssm_slots = 16;           // live sequences plus prefix-cache snapshots
  std::string ssm_state_dtype = "f32";  // f32 or f16 storage of recurrent states
  std::string kv_cache_dtype = "auto";  // auto, or fp8 (e4m3) keys and values
  PoolingFlags pooling;         // --runner, --task, --pooler-config
  bool load_progress = false;  // weight loading progress on stderr (off where stdout is data)
  TensorParallelOptions tensor_parallel;  // --tensor-parallel-size, and a started rank's hidden flags
  PipelineParallelOptions pipeline_parallel;  // --pipeline-parallel-size, and a started stage's hidden flags
  // What rank 0 runs as its other ranks; empty: its own strata command line (rank_command.h builds one).
  RankCommand rank_command;
  NodeOptions nodes;  // --nnodes, --node-rank, --master-addr, --master-port, --dist-timeout
  // The GPU a CUDA backend opens (data-parallel replica i and parallel rank i open GPU i).
  int32_t cuda_device = 0;
};

// model_required: false where the embedded default model stands in.
void add_model_flags(CLI::App& command, ModelFlags& flags, bool model_required = true);
// --tensor-parallel-size and --pipeline-parallel-size, on the commands that run a model split over
// ranks, and the hidden flags rank 0 gives the ranks it starts.
void add_parallel_flags(CLI::App& command, ModelFlags& flags);
// --expert-dispatch: true for all-to-all, false for all-reduce; an Error naming both otherwise.
bool parse_expert_dispatch(const std::string& mode);

struct OpenModel {
  std::unique_ptr<Backend> backend;
  // With --tensor-parallel-size or --pipeline-parallel-size > 1: this process's rank (0 when the
  // user started it). Made before the model and freed after it: rank 0's end tells the others to stop.
  std::unique_ptr<ParallelGroup> parallel;
  LoadedModel loaded;
  std::unique_ptr<ModelRunner> runner;
  // Speculative decoding with a draft model or an EAGLE-3 head; with method mtp only `model` is
  // set: the target checkpoint's MTP module, sharing the target's weights.
  LoadedModel draft_loaded;
  std::unique_ptr<ModelRunner> draft_runner;  // null without one
};

// Replaces a repo id in flags.model with the local path it resolves to (the Hugging Face
// cache, downloading what is missing); a path is left as it is.
void resolve_model_name(ModelFlags& flags);

// With a draft model in `speculative` it is loaded too, on the same backend with the same
// load format, and its KV pool gets as many blocks as the target's (an automatic GPU size
// leaves room for both); method mtp builds the checkpoint's MTP module the same way, and method
// eagle3 loads the head (speculative.draft_model) for the target.
OpenModel open_model(const ModelFlags& flags, const SpeculativeOptions& speculative = {});

// Another engine replica over an opened model (data parallelism on the CPU): its own runner (KV
// cache, SequenceMemory, workspace) and draft runner, sharing `open`'s weights and backend.
struct ReplicaRunners {
  std::unique_ptr<ModelRunner> runner;
  std::unique_ptr<ModelRunner> draft_runner;  // null without a draft runner
};
ReplicaRunners open_replica_runners(const OpenModel& open, const ModelFlags& flags,
                                    const SpeculativeOptions& speculative = {});

// With --nnodes > 1, the process the user started on node R holds global rank R * L (L ranks a
// node): sets its tensor- and pipeline-parallel ranks from that. Throws an Error for node flags
// that do not fit the parallel sizes.
void place_on_node(ModelFlags& flags);

// This process's part of LoRA adapters on `open`: its tensor-parallel shard and pipeline stage.
LoraPlacement lora_placement(const OpenModel& open);

// On a rank other than 0 (one that a node's first process started, or node R > 0's first
// process): opens this rank's part of the model and runs what rank 0 sends until it stops, then
// returns true. false on rank 0. lora: slots of rank 0's capacity that rank 0's messages load
// adapters into (the Python module's enable_lora).
bool serve_as_other_rank(const ModelFlags& flags, const std::optional<LoraCapacity>& lora = std::nullopt);

struct ModelTokenizer {
  std::unique_ptr<text::Tokenizer> tokenizer;
  bool has_text = false;               // false: an id-only stand-in (token-id prompts only)
  std::vector<int32_t> eos_token_ids;  // the tokenizer's eos and the config's
};

// The tokenizer at `path` (a tokenizer.json, a folder holding one, or a .gguf); a folder
// without tokenizer.json gets an id-only stand-in over the config's vocabulary.
ModelTokenizer open_model_tokenizer(const std::string& path, const ModelConfig& config);

// "1,2,3" -> {1, 2, 3}; an Error names the bad entry.
std::vector<int32_t> parse_id_list(const std::string& text, const std::string& flag);

}  // namespace strata::cli
