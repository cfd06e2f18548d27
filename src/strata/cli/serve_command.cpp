// `strata serve [MODEL]`: loads the model (the embedded SmolLM2 by default), starts the
// continuous-batching engine and the OpenAI-compatible HTTP server, and on SIGINT/SIGTERM
// stops taking requests, lets running ones finish (up to 10 s), then closes the listener.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "strata/cli/default_model.h"
#include "strata/cli/engine_flags.h"
#include "strata/cli/model_flags.h"
#include "strata/cli/serve_replicas.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/engine/rank_worker.h"
#include "strata/hub/model_reference.h"
#include "strata/kv_events/kv_events_config.h"
#include "strata/engine/startup_summary.h"
#include "strata/lora/lora_set.h"
#include "strata/parallel/parallel_group.h"
#include "strata/server/engine_service.h"
#include "strata/server/http_server.h"
#include "strata/server/vision_prompt.h"
#include "strata/server/tool_parsers/tool_parser_registry.h"
#include "strata/server/response_headers.h"
#include "strata/server/weight_prefetch.h"
#include "strata/text/chat_prompt.h"

namespace strata::cli {
namespace {

constexpr std::chrono::seconds kDrainDeadline{10};
constexpr int32_t kMaxDataParallelSize = 64;
constexpr std::chrono::milliseconds kFailedAnswersGrace{500};  // for the 500s of a lost device to go out

struct ServeFlags {
  ModelFlags model;
  std::string positional_model;
  std::string served_model_name;
  server::ServerOptions server;
  EngineOptions engine;
  std::vector<std::string> lora_modules;  // name=path
  std::string chat_template;              // a Jinja file or text; empty: the tokenizer's
  bool trust_request_chat_template = false;
  const server::ToolParser* tool_call_parser = nullptr;  // --tool-call-parser; null: from the chat template
  int32_t data_parallel_size = 1;  // engine replicas behind the one server
};

// --inject-step-fault N or N:sticky.
FaultInjection parse_fault_injection(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string step = spec.substr(0, colon), kind = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (step.empty() || step.find_first_not_of("0123456789") != std::string::npos || (!kind.empty() && kind != "sticky"))
    fail("--inject-step-fault takes N or N:sticky (a step number), got '{}'", spec);
  return {.fail_at_step = std::stoll(step), .sticky = kind == "sticky"};
}

struct LoraModules {
  std::vector<std::string> names, paths;
  std::unique_ptr<LoraSet> set;  // null without adapters
};

// --lora-modules name=path ...: PEFT folders, each served under its name; `placement`: this
// rank's part of them under tensor or pipeline parallelism.
LoraModules load_lora_modules(const std::vector<std::string>& specs, const ModelConfig& config, Backend& backend,
                              const LoraPlacement& placement) {
  LoraModules modules;
  std::vector<LoraAdapter> adapters;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      fail("--lora-modules takes name=path pairs (a PEFT adapter folder), got '{}'", spec);
    modules.names.push_back(spec.substr(0, eq));
    modules.paths.push_back(spec.substr(eq + 1));
    adapters.push_back(load_lora_adapter(modules.names.back(), modules.paths.back()));
  }
  if (!adapters.empty()) modules.set = std::make_unique<LoraSet>(adapters, config, backend, placement);
  return modules;
}

// A rank other than 0 (--tensor-parallel-size, --pipeline-parallel-size, --nnodes): its part of the model and of the
// adapters (every rank has the same --lora-modules, so the same slots), then what rank 0 sends.
void serve_as_rank(const ServeFlags& flags) {
  OpenModel open = open_model(flags.model);
  const LoraModules lora = load_lora_modules(flags.lora_modules, open.loaded.config, *open.backend, lora_placement(open));
  open.runner->set_lora(lora.set.get());
  serve_first_rank(*open.runner, open.parallel->control());
}

// What one client may hold: sizes, total deadlines, connections (docs/serving.md, "HTTP limits").
void add_http_limit_flags(CLI::App& cmd, server::ServerOptions& s) {
  cmd.add_option("--max-body-bytes", s.max_body_bytes, "largest request body, chunked too; larger ones get 413")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-header-bytes", s.max_header_bytes, "largest request line + headers; larger get 431")
      ->check(CLI::Range(int64_t{1024}, int64_t{1} << 30));
  cmd.add_option("--header-timeout", s.header_timeout_s, "seconds to receive a whole request head; 408 after")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--body-timeout", s.body_timeout_s, "seconds to receive a whole request body; 408 after")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--keep-alive-timeout", s.keep_alive_timeout_s, "seconds an idle connection is kept between requests")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--send-timeout", s.send_timeout_s, "seconds a client may take no byte of its answer before it is dropped")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-connections", s.max_connections, "connections open at once; more get 503")
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--max-connections-per-client", s.max_connections_per_client,
                 "connections open at once from one IP address; more get 503")
      ->check(CLI::Range(1, 1 << 20));
}

// What one request may send to a model that takes images (docs/serving.md, "Images").
void add_image_flags(CLI::App& cmd, server::ImageInputOptions& images) {
  cmd.add_option_function<std::string>(
      "--limit-mm-per-prompt",
      [&images](const std::string& text) {
        const nlohmann::json limits = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (!limits.is_object() || !limits.contains("image") || !limits["image"].is_number_integer() ||
            limits["image"].get<int64_t>() < 0 || limits.size() != 1)
          fail("--limit-mm-per-prompt takes JSON like '{{\"image\": 4}}' (images per prompt), got '{}'", text);
        images.max_images_per_prompt = limits["image"].get<int32_t>();
      },
      "most images one prompt may hold, as JSON: '{\"image\": N}' (default 8); more get 400");
  cmd.add_option("--max-image-pixels", images.max_image_pixels,
                 "largest decoded image (width x height) a request may send; larger get 400")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--allowed-local-media-path", images.allowed_local_media_path,
                 "let image_url parts name file:// images under this folder (default: file:// refused)");
}

void add_serve_flags(CLI::App& cmd, ServeFlags& f) {
  add_model_flags(cmd, f.model, /*model_required=*/false);
  add_parallel_flags(cmd, f.model);
  cmd.add_option_function<int32_t>(
      "--data-parallel-size,--dp",
      [&f](int32_t size) {
        if (size < 1 || size > kMaxDataParallelSize)
          fail("--data-parallel-size takes the number of engine replicas, 1 to {}, got {}", kMaxDataParallelSize, size);
        f.data_parallel_size = size;
      },
      "engine replicas behind this one server, each with its own KV cache and scheduler (on the CPU "
                 "they share the weights; on GPUs replica i runs on GPU i); requests go by prefix-cache "
                 "affinity, then to the least busy replica");
  cmd.add_option("MODEL", f.positional_model, "model folder or .gguf (default: the embedded SmolLM2)");
  cmd.add_option("--host", f.server.host, "address to listen on");
  cmd.add_option("--port", f.server.port, "port to listen on (0: any free port)")->check(CLI::Range(0, 65535));
  cmd.add_option("--api-key", f.server.api_key, "require 'Authorization: Bearer <key>' on every API route");
  cmd.add_option("--served-model-name", f.served_model_name, "the model id clients use (default: the file name)");
  cmd.add_option_function<std::string>(
      "--allowed-origins", [&f](const std::string& list) { f.server.allowed_origins = server::parse_allowed_origins(list); },
      "CORS: browser origins allowed to call the API, comma-separated (http://localhost:3000,...), or * (default: none)");
  cmd.add_flag("!--no-ui", f.server.ui, "do not serve the chat page at GET / (it answers 404 then)");
  cmd.add_flag("--ignore-unknown-fields", f.server.ignore_unknown_fields,
               "ignore request fields no API defines (logged once each) instead of answering 400");
  cmd.add_option_function<std::string>(
      "--reasoning-parser",
      [&f](const std::string& name) {
        const std::optional<server::ReasoningFormat> format = server::parse_reasoning_format(name);
        if (!format) fail("--reasoning-parser takes one of {} (or gpt-oss), got '{}'", server::kReasoningFormatNames, name);
        f.server.reasoning_parser = *format;
      },
      "split the model's thinking into reasoning_content: qwen3, deepseek_r1 or openai_gptoss (default: none)");
  cmd.add_option_function<std::string>(
      "--tool-call-parser",
      [&f](const std::string& name) {
        f.tool_call_parser = server::find_tool_parser(name);
        if (f.tool_call_parser == nullptr) fail("--tool-call-parser takes one of {}, got '{}'", server::kToolParserNames, name);
      },
      "how the model writes tool calls: hermes, llama3_json, mistral, qwen3_coder, deepseek_v3 or openai "
      "(default: chosen from the chat template, else hermes)");
  // vLLM needs it to parse tool calls at all; here they always are when a request sends tools.
  cmd.add_option("--chat-template", f.chat_template,
                 "a Jinja chat template (a file, or the template's text) to render chats with instead of the model's");
  cmd.add_flag("--trust-request-chat-template", f.trust_request_chat_template,
               "let chat requests send their own 'chat_template' (client-supplied template code runs on the server)");
  cmd.add_flag_function("--enable-auto-tool-choice", [](int64_t) {},
                        "accepted for vLLM command lines: tool calls are always parsed");
  add_http_limit_flags(cmd, f.server);
  add_image_flags(cmd, f.server.images);
  add_engine_flags(cmd, f.engine);
  cmd.add_option("--lora-modules", f.lora_modules,
                 "LoRA adapters as name=path (PEFT folders); a request picks one by its 'model' field");
  cmd.add_option_function<std::string>(
      "--kv-events-config", [&f](const std::string& json) { f.engine.kv_events = parse_kv_events_config(json); },
      R"(publish the prefix cache's block events as vLLM does, for prefix-aware routers, as vLLM's JSON: '{"enable_kv_cache_events": true, "publisher": "zmq", "endpoint": "tcp://*:5557", "replay_endpoint": "tcp://*:5558", "topic": "kv-events"}')");
  // Tests only (hidden): step N throws as a failing kernel would; ":sticky" loses the device.
  cmd.add_option_function<std::string>("--inject-step-fault", [&f](const std::string& spec) {
       f.engine.fault_injection = parse_fault_injection(spec);
     })->group("");
}

// --help lists the flags under vLLM's headings. A visible flag missing here fails the
// check, so a new flag has to pick its heading.
void group_serve_flags(CLI::App& cmd) {
  static const std::map<std::string, std::string> kGroups = {
      {"MODEL", "Model"}, {"--model", "Model"}, {"--revision", "Model"}, {"--quantization", "Model"},
      {"--max-model-len", "Model"}, {"--served-model-name", "Model"},
      {"--runner", "Model"}, {"--task", "Model"}, {"--pooler-config", "Model"},
      {"--load-format", "Load"},
      {"--device", "Device"}, {"--threads", "Device"}, {"--tensor-parallel-size", "Parallel"},
      {"--pipeline-parallel-size", "Parallel"}, {"--data-parallel-size", "Parallel"},
      {"--enable-expert-parallel", "Parallel"}, {"--expert-dispatch", "Parallel"}, {"--nnodes", "Parallel"}, {"--node-rank", "Parallel"},
      {"--master-addr", "Parallel"}, {"--master-port", "Parallel"}, {"--dist-timeout", "Parallel"},
      {"--num-kv-blocks", "Cache"}, {"--gpu-memory-utilization", "Cache"}, {"--ssm-state-dtype", "Cache"},
      {"--kv-cache-dtype", "Cache"}, {"--kv-events-config", "Cache"},
      {"--enable-prefix-caching", "Cache"}, {"--ssm-cache-slots", "Cache"}, {"--swap-space", "Cache"}, {"--ssm-host-cache-gb", "Cache"}, {"--ssm-snapshot-interval", "Cache"},
      {"--max-num-batched-tokens", "Scheduler"}, {"--max-num-seqs", "Scheduler"},
      {"--enable-chunked-prefill", "Scheduler"}, {"--async-scheduling", "Scheduler"},
      {"--speculative-config", "Speculative"},
      {"--lora-modules", "LoRA"},
      {"--host", "Frontend"}, {"--port", "Frontend"}, {"--api-key", "Frontend"}, {"--allowed-origins", "Frontend"},
      {"--no-ui", "Frontend"}, {"--ignore-unknown-fields", "Frontend"}, {"--reasoning-parser", "Frontend"},
      {"--tool-call-parser", "Frontend"}, {"--enable-auto-tool-choice", "Frontend"},
      {"--chat-template", "Frontend"},
      {"--trust-request-chat-template", "Frontend"},
      {"--max-body-bytes", "HTTP limits"}, {"--max-header-bytes", "HTTP limits"},
      {"--header-timeout", "HTTP limits"}, {"--body-timeout", "HTTP limits"},
      {"--keep-alive-timeout", "HTTP limits"}, {"--send-timeout", "HTTP limits"},
      {"--max-connections", "HTTP limits"}, {"--max-connections-per-client", "HTTP limits"},
      {"--limit-mm-per-prompt", "Images"}, {"--max-image-pixels", "Images"}, {"--allowed-local-media-path", "Images"},
  };
  for (CLI::Option* option : cmd.get_options()) {
    if (option->get_group().empty() || option == cmd.get_help_ptr()) continue;
    const auto it = kGroups.find(option->get_name());
    STRATA_CHECK_MSG(it != kGroups.end(), "serve flag without a --help group");
    option->group(it->second);
  }
}

// A model with a vision tower takes images, preprocessed as its preprocessor_config.json says.
std::optional<server::VisionInput> vision_input(const OpenModel& open, const std::string& path,
                                                const server::ImageInputOptions& limits) {
  std::optional<server::VisionInput> vision = server::vision_input(open.loaded, path, limits);
  if (vision)
    fmt::print("images: taken (vision tower on {}; at most {} a prompt, {} pixels each)\n", open.backend->name(),
               limits.max_images_per_prompt, limits.max_image_pixels);
  return vision;
}

// Set by the SIGINT/SIGTERM handler (any thread may run it: OpenBLAS starts threads before
// main, so blocking the signals everywhere is not possible); the watcher polls it.
std::atomic<int> g_shutdown_signal{0};

void on_shutdown_signal(int sig) { g_shutdown_signal.store(sig); }

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_shutdown_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a dead server
}

// On a signal: no new requests, running ones finish (or are cancelled at the deadline),
// then the listener closes and serve() returns. When the engine loses its device: /health
// turns 503, the failed requests' answers go out, the listener closes (run_serve then exits
// non-zero, for a supervisor to restart the server).
class ShutdownWatcher {
 public:
  ShutdownWatcher(server::HttpServer& http, ServeEngines& engines)
      : thread_([this, &http, &engines] { watch(http, engines); }) {}
  ~ShutdownWatcher() {
    done_ = true;
    thread_.join();
  }

 private:
  void watch(server::HttpServer& http, ServeEngines& engines) {
    while (!done_ && g_shutdown_signal.load() == 0 && !engines.fatal_error())
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done_) return;
    if (auto fatal = engines.fatal_error()) {
      fmt::print(stderr, "strata serve: the engine stopped: {}\n", *fatal);
      http.begin_drain();
      std::this_thread::sleep_for(kFailedAnswersGrace);
      http.stop();
      return;
    }
    http.begin_drain();  // before the log line: once it is printed, new requests get 503
    fmt::print("shutting down: finishing running requests (up to {} s)\n", kDrainDeadline.count());
    std::fflush(stdout);
    engines.service().shutdown(kDrainDeadline);
    http.stop();
  }

  std::atomic<bool> done_{false};
  std::thread thread_;
};

// The flag's parser, else the one the chat template implies; the choice is logged.
const server::ToolParser* pick_tool_parser(const ServeFlags& flags, const text::Tokenizer& tokenizer) {
  if (flags.tool_call_parser != nullptr) {
    fmt::print("tool-call parser: {} (--tool-call-parser)\n", flags.tool_call_parser->name());
    return flags.tool_call_parser;
  }
  const server::ToolParserChoice choice = server::tool_parser_for_template(tokenizer.chat_template());
  fmt::print("tool-call parser: {} ({}; --tool-call-parser picks another)\n", choice.parser->name(), choice.reason);
  return choice.parser;
}

// "embed: MEAN pooling, Dense 64 -> 32, normalized; bidirectional: inputs run whole, no prefix cache".
std::string pooling_summary(const ModelConfig& config, bool causal) {
  const PoolerConfig& pooler = *config.pooler;
  std::string text = fmt::format("{}: {} pooling", model_task_name(config), pooling_type_name(pooler.pooling_type));
  for (const auto& dense : pooler.dense)
    text += fmt::format(", Dense {} -> {}", dense->in_features, dense->out_features);
  if (pooler.normalize) text += ", normalized";
  if (!causal) text += "; bidirectional: inputs run whole, no prefix cache";
  return text;
}

// LoRA adapters per loaded model (one per GPU, or the one the CPU replicas share), set on
// every replica's runner.
std::vector<LoraModules> attach_lora(const std::vector<std::string>& specs, ServeReplicas& replicas) {
  std::vector<LoraModules> modules;
  for (OpenModel& open : replicas.models)
    modules.push_back(load_lora_modules(specs, open.loaded.config, *open.backend, lora_placement(open)));
  for (int32_t r = 0; r < replicas.size(); ++r)
    replicas.runners[r]->set_lora(modules[replicas.models.size() == 1 ? 0 : r].set.get());
  return modules;
}

// The start-up summary of the first replica, and how many there are.
void print_startup(const ServeReplicas& replicas, const ServeEngines& engines) {
  const OpenModel& open = replicas.first();
  const StartupFacts facts{.weights = open.loaded.weights.get(), .runner = open.runner.get(),
                           .model_context_tokens = open.loaded.config.max_position_embeddings,
                           .max_model_len = engines.engines[0]->max_model_len(),
                           .draft_weights = open.draft_runner ? open.draft_loaded.weights.get() : nullptr,
                           .draft_runner = open.draft_runner.get()};
  for (const std::string& line : startup_summary(facts)) fmt::print("{}\n", line);
  if (replicas.size() > 1)
    fmt::print("data parallel: {} engine replicas ({}), each with its own KV cache of {} blocks; requests go by "
               "prefix-cache affinity, then to the least busy\n", replicas.size(),
               replicas.models.size() == 1 ? "sharing one copy of the weights" : "one per GPU",
               open.runner->num_kv_blocks());
  if (const std::optional<PoolerConfig>& pooler = open.loaded.config.pooler)
    fmt::print("runner: pooling ({}), served on /v1/{}\n",
               pooling_summary(open.loaded.config, open.loaded.model->causal()),
               pooler->head == ModelHead::kClassifier ? "score, /v1/rerank and /v1/classify" : "embeddings");
}

void run_serve(ServeFlags flags) {
  install_signal_handlers();
  if (!flags.positional_model.empty()) {
    if (!flags.model.model.empty()) fail("give the model once: as MODEL or as --model, not both");
    flags.model.model = flags.positional_model;
  }
  if (flags.model.model.empty()) flags.model.model = default_model_path();
  // A repo id serves under its own name, not its snapshot folder's commit hash.
  const std::optional<hub::ModelReference> ref = hub::parse_model_reference(flags.model.model);
  const std::string name = ref ? flags.model.model : std::filesystem::path(flags.model.model).filename().string();
  resolve_model_name(flags.model);
  place_on_node(flags.model);
  if (flags.model.tensor_parallel.rank > 0 || flags.model.pipeline_parallel.rank > 0) return serve_as_rank(flags);
  const std::string& path = flags.model.model;
  const std::string served = flags.served_model_name.empty() ? name : flags.served_model_name;
  fmt::print("strata serve: loading {}\n", path);
  std::fflush(stdout);  // before the progress on stderr
  const std::vector<std::string> files = server::weight_files(path);
  if (!files.empty()) {
    ProgressReporter reading = ProgressReporter::to_stderr("reading weight files");
    server::prefetch_files(files, reading);
  }
  size_ssm_slots(flags.model, flags.engine);
  flags.model.load_progress = true;
  ServeReplicas replicas = open_serve_replicas(flags.model, flags.engine, flags.data_parallel_size);
  const std::vector<LoraModules> lora = attach_lora(flags.lora_modules, replicas);
  const OpenModel& open = replicas.first();
  ModelTokenizer text = open_model_tokenizer(path, open.loaded.config);
  if (!flags.chat_template.empty()) text.tokenizer->set_chat_template(text::load_chat_template(flags.chat_template));
  for (OpenModel& model : replicas.models) capture_decode_graphs(model, flags.engine, "strata serve");
  ServeEngines engines = start_engines(replicas, *text.tokenizer, text.eos_token_ids, flags.engine);
  const std::optional<server::VisionInput> vision = vision_input(open, path, flags.server.images);
  const server::ServedModel model{.service = &engines.service(),
                                  .tokenizer = text.tokenizer.get(),
                                  .accepts_text = text.has_text,
                                  .served_name = served,
                                  .accepted_names = {served, name, path},
                                  .lora_names = lora[0].names,
                                  .lora_paths = lora[0].paths,
                                  .model_path = path,
                                  .vocab_size = open.loaded.config.vocab_size,
                                  .pooler = open.loaded.config.pooler ? &*open.loaded.config.pooler : nullptr,
                                  .created_unix = static_cast<int64_t>(std::time(nullptr)),
                                  .tool_parser = pick_tool_parser(flags, *text.tokenizer),
                                  .vision = vision ? &*vision : nullptr,
                                  .trust_request_chat_template = flags.trust_request_chat_template};
  server::HttpServer http(model, flags.server);
  const int port = http.bind();
  print_startup(replicas, engines);
  const int32_t max_model_len = engines.service().max_model_len();
  fmt::print("ready: serving model '{}' (max_model_len {}) on http://{}:{}/v1\n", served, max_model_len,
             flags.server.host, port);
  if (flags.server.ui) fmt::print("chat page: http://{}:{}/\n", flags.server.host, port);
  std::fflush(stdout);
  {
    ShutdownWatcher watcher(http, engines);
    http.serve();
  }
  engines.service().shutdown(std::chrono::milliseconds(0));
  if (auto fatal = engines.fatal_error())
    fail("the engine stopped after a device failure ({}); restart the server", *fatal);
  fmt::print("stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "serve a model over an OpenAI-compatible HTTP API");
  add_serve_flags(*cmd, *flags);
  group_serve_flags(*cmd);
  flags->model.num_kv_blocks = 0;
  cmd->callback([flags] {
    flags->engine.num_kv_blocks = flags->model.num_kv_blocks;
    run_serve(*flags);
  });
}

}  // namespace strata::cli
