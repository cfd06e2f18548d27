#include "strata/cli/model_flags.h"

#include <filesystem>
#include <thread>

#include "strata/core/error.h"
#include "strata/core/logging.h"
#include "strata/engine/rank_worker.h"
#include "strata/hub/resolve_model.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/id_tokenizer.h"
#include "strata/text/load_tokenizer.h"

namespace strata::cli {

void add_model_flags(CLI::App& command, ModelFlags& flags, bool model_required) {
  CLI::Option* model =
      command.add_option("--model,-m", flags.model, "model folder (config.json + safetensors), .gguf, or a Hugging Face repo id "
                         "org/name[:GGUF_TAG] (fetched into the Hugging Face cache)");
  if (model_required) model->required();
  command.add_option("--revision", flags.revision,
                     "branch, tag or commit of a Hugging Face repo given as the model (default main)");
  command.add_option("--load-format", flags.load_format, "auto, or dummy for random weights")
      ->check(CLI::IsMember({"auto", "dummy"}));
  command.add_option("--quantization,-q", flags.quantization,
                     "fp8: quantize the linear layers of a bf16/f16/f32 checkpoint to FP8 at load (128-wide "
                     "blocks, one scale each); FP8 checkpoints load as FP8 without it")
      ->check(CLI::IsMember({"none", "fp8"}));
  command.add_option("--device", flags.device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  command.add_option("--threads", flags.threads, "CPU threads (0: all cores)")->check(CLI::NonNegativeNumber);
  command.add_option("--num-kv-blocks", flags.num_kv_blocks, "KV cache blocks of 16 tokens (0: auto)")
      ->check(CLI::NonNegativeNumber);
  command.add_option("--ssm-state-dtype", flags.ssm_state_dtype,
                     "storage of recurrent (SSM) states: f32, or f16 to halve their memory")
      ->check(CLI::IsMember({"f32", "f16"}));
  command.add_option("--kv-cache-dtype", flags.kv_cache_dtype,
                     "storage of attention keys and values: auto (bf16 on a GPU, f32 on the CPU), or fp8 / "
                     "fp8_e4m3 (e4m3 with scale 1: twice the tokens in the same memory)")
      ->check(CLI::IsMember({"auto", "fp8", "fp8_e4m3"}));
  command.add_option("--gpu-memory-utilization", flags.gpu_memory_utilization,
                     "share of GPU memory for weights, KV cache and activations; sizes the KV cache "
                     "when --num-kv-blocks is 0")
      ->check(CLI::Range(0.05, 1.0));
  command.add_option("--runner", flags.pooling.runner,
                     "generate, or pooling for embedding and scoring models (auto: from the checkpoint's "
                     "architectures and sentence-transformers files)")
      ->check(CLI::IsMember({"auto", "generate", "pooling"}));
  command.add_option("--task", flags.pooling.task, "embed, classify or score (a pooling runner), or generate")
      ->check(CLI::IsMember({"embed", "classify", "score", "generate"}));
  command.add_option("--pooler-config", flags.pooling.pooler_config,
                     "how a pooling model pools, as JSON: {\"pooling_type\": \"LAST|MEAN|CLS\", \"normalize\": true}");
}

namespace {

// --<kind>-size,--<alias>, and the hidden --<kind>-rank and --<kind>-group that rank 0 gives the ranks it starts.
void add_group_flags(CLI::App& command, const std::string& kind, const std::string& alias,
                     RankGroupMembership& membership, const std::string& help) {
  command.add_option(fmt::format("--{}-size,--{}", kind, alias), membership.size, help)
      ->check(CLI::Range(1, 64))
      ->group("Parallel");
  command.add_option(fmt::format("--{}-rank", kind), membership.rank)->group("");
  command.add_option(fmt::format("--{}-group", kind), membership.group_name)->group("");
}

// SGLang's names for a static start over several machines (docs/parallelism.md, "Several machines").
void add_node_flags(CLI::App& command, NodeOptions& nodes) {
  command.add_option("--nnodes", nodes.num_nodes,
                     "machines to spread the tensor- and pipeline-parallel ranks over, evenly; start each by hand with "
                     "the same flags and its own --node-rank")
      ->check(CLI::Range(1, 64))
      ->group("Parallel");
  command.add_option("--node-rank", nodes.node_rank,
                     "this machine's place, 0 to --nnodes - 1; node 0 holds rank 0 (the scheduler, the HTTP server)")
      ->check(CLI::NonNegativeNumber)
      ->group("Parallel");
  command.add_option("--master-addr", nodes.master_addr, "address of node 0, where the nodes meet (default 127.0.0.1)")
      ->group("Parallel");
  command.add_option("--master-port", nodes.master_port, "port node 0 listens on for the other ranks (default 29500)")
      ->check(CLI::Range(1, 65535))
      ->group("Parallel");
  command.add_option_function<double>(
             "--dist-timeout",
             [&nodes](double seconds) { nodes.timeout = std::chrono::milliseconds(std::llround(seconds * 1000)); },
             "seconds the ranks wait for each other at the start, and rank 0 for a rank's answer after it "
             "(default 120)")
      ->check(CLI::Range(0.1, 86400.0))
      ->group("Parallel");
}

}  // namespace

bool parse_expert_dispatch(const std::string& mode) {
  if (mode == "all-to-all") return true;
  if (mode != "all-reduce") fail("--expert-dispatch {}: expected all-reduce or all-to-all", mode);
  return false;
}

void add_parallel_flags(CLI::App& command, ModelFlags& flags) {
  add_group_flags(command, "tensor-parallel", "tp", flags.tensor_parallel,
                  "ranks to split the model over, one process each: attention heads, MLP columns and MoE experts "
                  "(docs/parallelism.md says which models split)");
  command.add_flag("--enable-expert-parallel", flags.tensor_parallel.expert_parallel,
                   "MoE layers: each rank holds whole experts (a range of them) instead of every expert's "
                   "share of the intermediate columns")
      ->group("Parallel");
  command.add_option_function<std::string>(
             "--expert-dispatch",
             [&flags](const std::string& mode) { flags.tensor_parallel.dispatch_tokens = parse_expert_dispatch(mode); },
             "with --enable-expert-parallel: all-reduce (default; every rank sees every token) or all-to-all "
             "(each rank routes its slice of the tokens and sends each to its experts' rank; the CPU only for now)")
      ->group("Parallel");
  add_group_flags(command, "pipeline-parallel", "pp", flags.pipeline_parallel,
                  "pipeline stages to split the model's layers over, one process each (on GPUs rank i runs on GPU "
                  "i); stage 0 embeds the tokens, the last holds the head");
  add_node_flags(command, flags.nodes);
}

void place_on_node(ModelFlags& flags) {
  const NodeOptions& nodes = flags.nodes;
  if (nodes.num_nodes == 1) {
    if (nodes.node_rank != 0) fail("--node-rank {} needs --nnodes, the number of machines", nodes.node_rank);
    return;
  }
  const int tp = flags.tensor_parallel.size, world = tp * flags.pipeline_parallel.size;
  if (world == 1)
    fail("--nnodes {} spreads tensor- and pipeline-parallel ranks over machines; give --tensor-parallel-size or "
         "--pipeline-parallel-size too", nodes.num_nodes);
  const int per_node = ranks_per_node(nodes, world);
  // A rank that its node's first process started knows its place from its hidden flags.
  if (!flags.tensor_parallel.group_name.empty() || !flags.pipeline_parallel.group_name.empty()) return;
  const int rank = nodes.node_rank * per_node;
  flags.tensor_parallel.rank = rank % tp;
  flags.pipeline_parallel.rank = rank / tp;
}

void resolve_model_name(ModelFlags& flags) {
  const std::optional<hub::ModelReference> ref = hub::parse_model_reference(flags.model);
  if (!ref) return;
  flags.model = hub::resolve_model(*ref, hub::hub_options_from_environment(flags.revision));
  fmt::print(stderr, "strata: {} (revision {}) is {}\n", ref->repo_id, flags.revision, flags.model);
}

namespace {

std::unique_ptr<Backend> open_backend(const ModelFlags& flags) {
  const int threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency());
  std::unique_ptr<Backend> backend;
  if (flags.device != "cpu") backend = make_cuda_backend(flags.cuda_device);
  if (backend) return backend;
  // A parallel rank past 0 on a machine without GPUs runs on the CPU, as rank 0 does.
  if (flags.cuda_device > 0 && (flags.device == "cuda" || make_cuda_backend(0) != nullptr))
    fail("data-parallel replica {0} or parallel rank {0} runs on GPU {0}, which is not visible; give at most as many "
         "replicas, or --tensor-parallel-size times --pipeline-parallel-size ranks, as there are GPUs", flags.cuda_device);
  if (flags.device == "cuda")
    fail("--device cuda: {}", cuda_backend_compiled() ? "no CUDA GPU is visible" : "this build has no CUDA backend");
  return make_cpu_backend(threads);
}

LoadedModel load_with_flags(const ModelFlags& flags, const std::string& path, Backend& backend,
                            const TensorShard& shard = {}, const PipelineParallelOptions& pipeline = {}) {
  std::optional<ProgressReporter> progress;
  if (flags.load_progress) progress.emplace(ProgressReporter::to_stderr("loading weights"));
  return load_model({.model_path = path,
                     .load_format = parse_load_format(flags.load_format),
                     .quantization = parse_weight_quantization(flags.quantization),
                     .pooling = flags.pooling,
                     .progress = progress ? &*progress : nullptr,
                     .shard = shard,
                     .pipeline_stage = pipeline.rank,
                     .pipeline_parallel_size = pipeline.size},
                    backend);
}

RunnerOptions runner_options(const ModelFlags& flags) {
  return {.num_kv_blocks = flags.num_kv_blocks,
          .num_ssm_slots = flags.num_ssm_slots,
          .ssm_state_dtype = flags.ssm_state_dtype == "f16" ? SsmStateDType::kF16 : SsmStateDType::kF32,
          .kv_cache_dtype = parse_kv_cache_dtype(flags.kv_cache_dtype),
          .gpu_memory_utilization = flags.gpu_memory_utilization};
}

// The draft's weights load before the target's runner sizes its KV pool from what is left.
void open_draft(const ModelFlags& flags, const SpeculativeOptions& speculative, OpenModel& open) {
  ModelFlags draft_flags = flags;
  draft_flags.model = speculative.draft_model;
  draft_flags.pooling = {};
  try {
    resolve_model_name(draft_flags);
    open.draft_loaded = load_with_flags(draft_flags, draft_flags.model, *open.backend);
  } catch (const Error& e) {
    fail("--speculative-config: the draft model '{}' could not be loaded: {}", speculative.draft_model, e.what());
  }
}

// Builds rank 0's part without weight data first: a size the model cannot split over fails here,
// once, before any other rank starts.
void check_split(const ModelFlags& flags) {
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  load_model({.model_path = flags.model, .load_format = parse_load_format(flags.load_format), .shapes_only = true,
              .pooling = flags.pooling,
              .shard = {.rank = 0, .size = flags.tensor_parallel.size, .expert_parallel = flags.tensor_parallel.expert_parallel,
                         .dispatch_tokens = flags.tensor_parallel.dispatch_tokens},
              .pipeline_parallel_size = flags.pipeline_parallel.size},
             *cpu);
}

// What every node must be started with: the model by its folder or file name (each machine may
// keep it elsewhere), the backend it found, and the flags that shape every rank's part.
std::vector<std::pair<std::string, std::string>> flags_every_node_shares(const ModelFlags& flags,
                                                                           const Backend& backend) {
  std::string model = flags.model;
  while (model.size() > 1 && model.back() == '/') model.pop_back();
  return {{"--model", std::filesystem::path(model).filename().string()},
          {"--device", backend.device().is_cpu() ? "cpu" : "cuda"},
          {"--tensor-parallel-size", std::to_string(flags.tensor_parallel.size)},
          {"--pipeline-parallel-size", std::to_string(flags.pipeline_parallel.size)},
          {"--enable-expert-parallel", flags.tensor_parallel.expert_parallel ? "on" : "off"},
          {"--expert-dispatch", flags.tensor_parallel.dispatch_tokens ? "all-to-all" : "all-reduce"},
          {"--nnodes", std::to_string(flags.nodes.num_nodes)},
          {"--load-format", flags.load_format},
          {"--quantization", flags.quantization},
          {"--kv-cache-dtype", flags.kv_cache_dtype},
          {"--ssm-state-dtype", flags.ssm_state_dtype},
          {"--runner", flags.pooling.runner},
          {"--task", flags.pooling.task}};
}

// With --tensor-parallel-size or --pipeline-parallel-size > 1: this process joins its group (rank 0
// starts the others) and the runner gets the group's channels.
void join_parallel_group(const ModelFlags& flags, OpenModel& open) {
  ParallelLayout layout{.tensor_parallel = flags.tensor_parallel, .pipeline_parallel = flags.pipeline_parallel,
                        .rank_command = flags.rank_command, .nodes = flags.nodes};
  if (!layout.splits()) return;
  // A draft model, an EAGLE-3 head or the MTP module runs whole on rank 0; over stages the last
  // stage sends it what it reads from the target with the logits (Model::stage_output).
  layout.nodes.shared_flags = flags_every_node_shares(flags, *open.backend);
  open.parallel = std::make_unique<ParallelGroup>(layout, *open.backend);
}

void use_parallel_group(OpenModel& open, RunnerOptions& options) {
  if (!open.parallel) return;
  options.tensor_parallel = open.parallel->tensor_parallel();
  options.rank_control = &open.parallel->control();
  options.pipeline = open.parallel->pipeline();
}

// The target's runner options beside what `open` loaded for speculation.
RunnerOptions target_runner_options(const ModelFlags& flags, const SpeculativeOptions& speculative,
                                    const OpenModel& open) {
  RunnerOptions options = runner_options(flags);
  // So graphs captured before the engine keep what the proposer reads.
  options.keep_hidden_states = speculative.uses_mtp();
  if (speculative.uses_eagle3()) options.aux_hidden_layers = open.draft_loaded.model->parts().eagle3.target_layers;
  if (speculative.uses_draft_runner()) {
    options.shared_kv_bytes_per_block =
        kv_cache_shape(*open.draft_loaded.model, *open.backend, options.block_size, options.kv_cache_dtype)
            .bytes_per_block();
  }
  return options;
}

RunnerOptions draft_runner_options(const ModelFlags& flags, const ModelRunner& target) {
  RunnerOptions options = runner_options(flags);
  options.num_kv_blocks = target.num_kv_blocks();
  options.num_ssm_slots = flags.num_ssm_slots;  // size_ssm_slots gives two per sequence: kept and guessing
  return options;
}

}  // namespace

OpenModel open_model(const ModelFlags& given, const SpeculativeOptions& speculative) {
  ModelFlags flags = given;
  resolve_model_name(flags);  // a no-op for callers that resolved already: a path stays a path
  OpenModel open;
  // Before the backend: the check's own CPU backend sets the thread count the real one then sets again.
  const ParallelLayout layout{.tensor_parallel = flags.tensor_parallel, .pipeline_parallel = flags.pipeline_parallel};
  if (layout.splits() && layout.rank() == 0) check_split(flags);
  if (layout.splits()) flags.cuda_device = layout.rank() % ranks_per_node(flags.nodes, layout.world_size());  // one GPU per local rank
  open.backend = open_backend(flags);
  join_parallel_group(flags, open);
  const TensorShard shard = open.parallel ? open.parallel->shard() : TensorShard{};
  open.loaded = load_with_flags(flags, flags.model, *open.backend, shard, flags.pipeline_parallel);
  if (speculative.uses_mtp()) open.draft_loaded = load_mtp_module(open.loaded);
  if (speculative.uses_draft_model()) open_draft(flags, speculative, open);
  if (speculative.uses_eagle3())
    open.draft_loaded = load_eagle3_head(speculative.draft_model, *open.loaded.model, *open.backend,
                                         parse_load_format(flags.load_format));
  RunnerOptions options = target_runner_options(flags, speculative, open);
  use_parallel_group(open, options);
  open.runner = std::make_unique<ModelRunner>(*open.loaded.model, *open.backend, options);
  if (open.parallel) open.parallel->control().barrier();  // every rank has its part
  if (speculative.uses_draft_runner())
    open.draft_runner = std::make_unique<ModelRunner>(*open.draft_loaded.model, *open.backend,
                                                      draft_runner_options(flags, *open.runner));
  return open;
}

ReplicaRunners open_replica_runners(const OpenModel& open, const ModelFlags& flags,
                                    const SpeculativeOptions& speculative) {
  ReplicaRunners replica;
  replica.runner = std::make_unique<ModelRunner>(*open.loaded.model, *open.backend,
                                                 target_runner_options(flags, speculative, open));
  if (speculative.uses_draft_runner())
    replica.draft_runner = std::make_unique<ModelRunner>(*open.draft_loaded.model, *open.backend,
                                                         draft_runner_options(flags, *replica.runner));
  return replica;
}

LoraPlacement lora_placement(const OpenModel& open) {
  return {.shard = open.parallel ? open.parallel->shard() : TensorShard{}, .stage = open.loaded.model->pipeline_stage()};
}

bool serve_as_other_rank(const ModelFlags& given, const std::optional<LoraCapacity>& lora) {
  ModelFlags flags = given;
  place_on_node(flags);
  if (flags.tensor_parallel.rank == 0 && flags.pipeline_parallel.rank == 0) return false;
  OpenModel open = open_model(flags);
  std::unique_ptr<LoraSet> lora_set;
  if (lora) {
    lora_set = std::make_unique<LoraSet>(*lora, open.loaded.config, *open.backend, lora_placement(open));
    open.runner->set_lora(lora_set.get());
  }
  serve_first_rank(*open.runner, open.parallel->control(), lora_set.get());
  return true;
}

ModelTokenizer open_model_tokenizer(const std::string& path, const ModelConfig& config) {
  namespace fs = std::filesystem;
  ModelTokenizer out;
  out.has_text = !(fs::is_directory(path) && !fs::exists(fs::path(path) / "tokenizer.json"));
  if (!out.has_text) {
    fmt::print(stderr, "note: {} has no tokenizer.json; prompts must be token ids (on /v1/completions when serving)\n", path);
    out.tokenizer = text::make_id_tokenizer(static_cast<int32_t>(config.vocab_size));
    out.eos_token_ids.assign(config.eos_token_ids.begin(), config.eos_token_ids.end());
    return out;
  }
  out.tokenizer = text::load_tokenizer(path);
  out.eos_token_ids = text::stop_token_ids(*out.tokenizer, config.eos_token_ids);
  return out;
}

std::vector<int32_t> parse_id_list(const std::string& text, const std::string& flag) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v < 0 || v > INT32_MAX) throw std::invalid_argument(item);
      ids.push_back(static_cast<int32_t>(v));
    } catch (const std::exception&) {
      fail("{}: '{}' is not a token id; give comma-separated non-negative integers", flag, item);
    }
    start = end + 1;
  }
  return ids;
}

}  // namespace strata::cli
