// Offline throughput of the real serving engine (continuous batching, chunked prefill, the
// scheduler's token budget, sampling on the device): N requests of exactly P random prompt
// tokens and O output tokens (ignore_eos) all submitted at t=0. Prints and appends one JSON
// line: wall time, output and total tok/s, TTFT and time per output token (mean/p50/p99).
//   engine_throughput_bench --model DIR [--device cuda|cpu] [--load-format dummy] [--requests 256]
//     [--prompt-tokens 512] [--output-tokens 128] [--max-num-seqs 256] [--max-num-batched-tokens 8192] [--json FILE]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>

#include "strata/bench/engine_workload.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/engine/speculative_config.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  std::string model;
  std::string load_format = "dummy";
  std::string device = "cuda";
  int threads = 0;  // CPU threads, 0: all cores
  int32_t requests = 256;
  int32_t prompt_tokens = 512;
  int32_t output_tokens = 128;
  int32_t warmup_output_tokens = 16;  // 0: no warm-up pass
  EngineOptions engine{.max_num_batched_tokens = 8192, .max_num_seqs = 256};
  int64_t num_kv_blocks = 0;  // 0: every request's prompt + output fits at once
  float temperature = 0.0f;
  bool graphs = true;
  double timeout_s = 600;
  std::string json;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Exactly `count` ids per prompt, drawn from [5, vocab - 5) so no prompt shares a prefix
// with another (no prefix-cache hits) and none is a special id at the vocabulary's edges.
std::vector<std::vector<int32_t>> make_prompts(int32_t requests, int32_t count, int32_t vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> id(5, std::max(6, vocab - 6));
  std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(requests));
  for (auto& p : prompts) {
    p.resize(static_cast<size_t>(count));
    for (int32_t& t : p) t = id(rng);
  }
  return prompts;
}

// Every request asks for exactly output_tokens, eos ignored, all submitted at once.
bench::EngineRun run_workload(Engine& engine, const std::vector<std::vector<int32_t>>& prompts, int32_t output_tokens,
                              const Flags& flags) {
  std::vector<GenerationRequest> requests;
  for (const auto& prompt : prompts)
    requests.push_back({.prompt_ids = prompt, .sampling = {.temperature = flags.temperature, .seed = 7},
                        .max_tokens = output_tokens, .ignore_eos = true});
  return bench::run_engine_workload(engine, std::move(requests), flags.timeout_s);
}

// Nearest-rank percentile of an ascending vector (p in [0, 1]).
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

struct Summary {
  double mean = 0, p50 = 0, p99 = 0;
};

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(values.size());
  s.p50 = percentile(values, 0.5);
  s.p99 = percentile(values, 0.99);
  return s;
}

void check_counts(const bench::EngineRun& run, int32_t output_tokens) {
  bench::check_exact_lengths(run, std::vector<int64_t>(run.requests.size(), output_tokens));
}

struct Setup {
  std::string device_name;
  int64_t kv_blocks = 0;
  double load_s = 0, warmup_s = 0;
  bool async_scheduling = false;
};

std::string result_json(const Flags& flags, const Setup& setup, const bench::EngineRun& run,
                        const EngineStatsSnapshot& stats) {
  std::vector<double> ttft, tpot;
  int64_t out_tokens = 0;
  for (const bench::EngineRequestTiming& r : run.requests) {
    ttft.push_back(r.first_token_s * 1e3);
    if (r.output_tokens > 1) tpot.push_back((r.finish_s - r.first_token_s) * 1e3 / static_cast<double>(r.output_tokens - 1));
    out_tokens += r.output_tokens;
  }
  const int64_t prompt_tokens = int64_t{flags.requests} * flags.prompt_tokens;
  const Summary t = summarize(ttft), p = summarize(tpot);
  return fmt::format(
      R"({{"bench":"engine_throughput","model":"{}","device":"{}","requests":{},"prompt_tokens":{},"output_tokens":{},)"
      R"("total_prompt_tokens":{},"total_output_tokens":{},"wall_s":{:.6f},"output_tok_s":{:.1f},"total_tok_s":{:.1f},)"
      R"("ttft_ms_mean":{:.2f},"ttft_ms_p50":{:.2f},"ttft_ms_p99":{:.2f},"tpot_ms_mean":{:.3f},"tpot_ms_p50":{:.3f},)"
      R"("tpot_ms_p99":{:.3f},"max_num_seqs":{},"max_num_batched_tokens":{},"chunked_prefill":{},"kv_blocks":{},)"
      R"("preemptions":{},"swapped_out":{},"swap_out_bytes":{},"temperature":{},"graphs":{},"async_scheduling":{},"load_s":{:.2f},)"
      R"("warmup_s":{:.2f}}})",
      flags.model, setup.device_name, flags.requests, flags.prompt_tokens, flags.output_tokens, prompt_tokens,
      out_tokens, run.wall_s, static_cast<double>(out_tokens) / run.wall_s,
      static_cast<double>(out_tokens + prompt_tokens) / run.wall_s, t.mean, t.p50, t.p99, p.mean, p.p50, p.p99,
      flags.engine.max_num_seqs, flags.engine.max_num_batched_tokens, flags.engine.enable_chunked_prefill,
      setup.kv_blocks, stats.preemptions_total, stats.swapped_out_total, stats.swap_out_bytes_total, flags.temperature, flags.graphs, setup.async_scheduling, setup.load_s,
      setup.warmup_s);
}

void validate(const Flags& flags) {
  if (flags.requests < 1 || flags.prompt_tokens < 1 || flags.output_tokens < 1)
    fail("--requests, --prompt-tokens and --output-tokens must be at least 1 (got {}, {}, {})", flags.requests,
         flags.prompt_tokens, flags.output_tokens);
  if (flags.device != "cpu" && flags.device != "cuda") fail("--device must be cpu or cuda, got '{}'", flags.device);
}

std::unique_ptr<Backend> open_backend(const Flags& flags) {
  if (flags.device == "cpu") {
    const int threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency());
    return make_cpu_backend(threads);
  }
  std::unique_ptr<Backend> backend = make_cuda_backend(0);
  if (!backend)
    fail("--device cuda: {}", cuda_backend_compiled() ? "no CUDA GPU is visible" : "this build has no CUDA backend");
  return backend;
}

int run(const Flags& flags) {
  validate(flags);
  std::unique_ptr<Backend> backend = open_backend(flags);
  Setup setup{.device_name = backend->name()};
  Clock::time_point t0 = Clock::now();
  LoadedModel loaded =
      load_model({.model_path = flags.model, .load_format = parse_load_format(flags.load_format)}, *backend);
  backend->synchronize();
  setup.load_s = seconds_since(t0);
  const int32_t vocab = static_cast<int32_t>(loaded.config.vocab_size);
  auto tokenizer = text::make_id_tokenizer(vocab);
  const int64_t per_request = (flags.prompt_tokens + flags.output_tokens + 15) / 16;
  setup.kv_blocks = flags.num_kv_blocks > 0 ? flags.num_kv_blocks : int64_t{flags.requests} * per_request + 64;
  const int64_t graph_rows = flags.graphs ? std::max<int64_t>(256, flags.engine.max_num_seqs) : 0;
  ModelRunner runner(*loaded.model, *backend,
                     {.num_kv_blocks = setup.kv_blocks,
                      .num_ssm_slots = 2 * int64_t{flags.engine.max_num_seqs} + flags.engine.ssm_cache_slots,
                      .max_graph_batch_size = graph_rows});
  if (flags.warmup_output_tokens > 0) {  // settles workspaces and captures the decode graphs
    t0 = Clock::now();
    Engine warm(runner, *tokenizer, {}, flags.engine);
    const int32_t out = std::min(flags.warmup_output_tokens, flags.output_tokens);
    check_counts(run_workload(warm, make_prompts(flags.requests, flags.prompt_tokens, vocab, 99), out, flags), out);
    warm.shutdown(std::chrono::seconds(10));
    setup.warmup_s = seconds_since(t0);
  }
  // The warm-up engine's prefix cache hooked the pool; it is gone (and the next engine may
  // run without a cache), so drop the hook.
  runner.block_pool().set_on_reuse({});
  Engine engine(runner, *tokenizer, {}, flags.engine);
  setup.async_scheduling = engine.async_scheduling();
  const bench::EngineRun result =
      run_workload(engine, make_prompts(flags.requests, flags.prompt_tokens, vocab, 1), flags.output_tokens, flags);
  const EngineStatsSnapshot stats = engine.stats();
  engine.shutdown(std::chrono::seconds(10));
  check_counts(result, flags.output_tokens);
  const std::string line = result_json(flags, setup, result, stats);
  fmt::print("{}\n", line);
  if (!flags.json.empty()) {
    std::ofstream out(flags.json, std::ios::app);
    if (!(out << line << "\n")) fail("cannot append to --json file '{}'", flags.json);
  }
  return 0;
}

void add_flags(CLI::App& app, Flags& f) {
  // A repeated flag takes its last value, so run_all.sh's $ENGINE_ARGS can override its own.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--model", f.model, "model folder (config.json; weights unless --load-format dummy)")->required();
  app.add_option("--load-format", f.load_format, "auto, or dummy for random weights")
      ->check(CLI::IsMember({"auto", "dummy"}));
  app.add_option("--device", f.device, "cuda or cpu")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--threads", f.threads, "CPU threads (0: all cores)");
  app.add_option("--requests", f.requests, "requests, all submitted at t=0");
  app.add_option("--prompt-tokens", f.prompt_tokens, "random prompt tokens per request");
  app.add_option("--output-tokens", f.output_tokens, "output tokens per request (eos ignored)");
  app.add_option("--warmup-output-tokens", f.warmup_output_tokens,
                 "output tokens of the untimed warm-up pass over the same shape (0: none)");
  app.add_option("--max-num-seqs", f.engine.max_num_seqs, "sequences running at once");
  app.add_option("--max-num-batched-tokens", f.engine.max_num_batched_tokens, "token budget of one engine step");
  app.add_flag("!--no-enable-chunked-prefill", f.engine.enable_chunked_prefill, "prefill each prompt in one step");
  app.add_flag("!--no-enable-prefix-caching", f.engine.enable_prefix_caching, "turn the prefix cache off");
  app.add_option("--num-kv-blocks", f.num_kv_blocks, "KV blocks of 16 tokens (0: all requests fit at once)");
  app.add_option("--swap-space", f.engine.swap_space_gib, "GiB of host memory preempted sequences swap to (0: recompute)");
  app.add_option("--temperature", f.temperature, "0: greedy (default); > 0 samples");
  app.add_flag("!--no-graphs", f.graphs, "never replay CUDA graphs for decode steps");
  app.add_option_function<std::string>(
      "--speculative-config", [&f](const std::string& json) { f.engine.speculative = parse_speculative_config(json); },
      "speculative decoding, vLLM's JSON (ngram)");
  app.add_flag_function(
      "--async-scheduling,!--no-async-scheduling", [&f](int64_t count) { f.engine.async_scheduling = count > 0; },
      "queue each step before reading the previous step's tokens back (default: on with a GPU)");
  app.add_option("--timeout-s", f.timeout_s, "give up (exit 1) when a pass runs longer");
  app.add_option("--json", f.json, "append the result line to this file");
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Flags flags;
  CLI::App app{"throughput of the serving engine on a fixed synthetic workload"};
  strata::add_flags(app, flags);
  CLI11_PARSE(app, argc, argv);
  try {
    return strata::run(flags);
  } catch (const std::exception& e) {
    fmt::print(stderr, "engine_throughput_bench: {}\n", e.what());
    return 1;
  }
}
