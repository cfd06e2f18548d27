// `strata bench latency`: `vllm bench latency` on the in-process engine. Each iteration sends
// one batch of --batch-size random prompts of --input-len tokens, each generating exactly
// --output-len tokens, and times it end to end; the average and percentiles are printed.
// Unlike vLLM every iteration draws fresh prompts, so no prefix-cache hit shortens a prefill.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "strata/bench/bench_dataset.h"
#include "strata/bench/metric_summary.h"
#include "strata/cli/bench_engine.h"

namespace strata::cli {
namespace {

constexpr int64_t kPromptVocab = 10000;  // vLLM's dummy prompts draw ids below 10000

struct LatencyFlags {
  OfflineBenchFlags common;
  int64_t input_len = 32, output_len = 128, batch_size = 8;
  int64_t num_iters_warmup = 10, num_iters = 30;
  uint64_t seed = 0;
};

// One batch through the engine; its wall time in seconds.
double run_batch(Engine& engine, const LatencyFlags& flags, uint64_t seed, int64_t vocab_size) {
  const std::vector<bench::BenchRequest> prompts = bench::sample_random_requests(
      {.num_requests = flags.batch_size, .input_len = flags.input_len, .output_len = flags.output_len, .seed = seed},
      nullptr, std::min(vocab_size, kPromptVocab));
  std::vector<GenerationRequest> requests;
  for (const bench::BenchRequest& p : prompts)
    requests.push_back({.prompt_ids = p.prompt_ids, .max_tokens = static_cast<int32_t>(flags.output_len), .ignore_eos = true});
  const bench::EngineRun run = bench::run_engine_workload(engine, std::move(requests), kBenchTimeoutS);
  bench::check_exact_lengths(run, std::vector<int64_t>(run.requests.size(), flags.output_len));
  return run.wall_s;
}

void run_latency(const LatencyFlags& flags) {
  const std::unique_ptr<BenchEngine> bench = start_bench_engine(flags.common);
  const int64_t vocab = bench->open.loaded.config.vocab_size;
  uint64_t seed = flags.seed;
  for (int64_t i = 0; i < flags.num_iters_warmup; ++i) run_batch(*bench->engine, flags, seed++, vocab);
  fmt::print("Warmup iterations: {} done\n", flags.num_iters_warmup);
  std::vector<double> latencies;
  for (int64_t i = 0; i < flags.num_iters; ++i) latencies.push_back(run_batch(*bench->engine, flags, seed++, vocab));
  const std::vector<double> percentages = {10, 25, 50, 75, 90, 99};
  const bench::MetricSummary summary = bench::summarize(latencies, percentages);
  fmt::print("Avg latency: {} seconds\n", summary.mean);
  nlohmann::json percentiles;
  for (const auto& [p, value] : summary.percentiles) {
    fmt::print("{}% percentile latency: {} seconds\n", p, value);
    percentiles[fmt::format("{}", p)] = value;
  }
  if (!flags.common.output_json.empty())
    write_json_file(flags.common.output_json,
                    {{"avg_latency", summary.mean}, {"latencies", latencies}, {"percentiles", percentiles}});
}

}  // namespace

void add_bench_latency_command(CLI::App& bench) {
  auto flags = std::make_shared<LatencyFlags>();
  CLI::App* cmd = bench.add_subcommand("latency", "time one batch end to end, in-process (vllm bench latency)");
  add_offline_bench_flags(*cmd, flags->common);
  cmd->add_option("--input-len", flags->input_len, "prompt tokens per request")->check(CLI::PositiveNumber);
  cmd->add_option("--output-len", flags->output_len, "output tokens per request (eos ignored)")->check(CLI::PositiveNumber);
  cmd->add_option("--batch-size", flags->batch_size, "requests per batch")->check(CLI::PositiveNumber);
  cmd->add_option("--num-iters-warmup", flags->num_iters_warmup, "untimed batches first")->check(CLI::NonNegativeNumber);
  cmd->add_option("--num-iters", flags->num_iters, "timed batches")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", flags->seed, "seed of the random prompts");
  cmd->callback([flags] { run_latency(*flags); });
}

}  // namespace strata::cli
