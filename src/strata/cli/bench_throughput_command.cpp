// `strata bench throughput`: `vllm bench throughput` on the in-process engine. Every request
// of the dataset (random prompts of --input-len tokens, or ShareGPT with --dataset-path) is
// submitted at once, eos ignored, and requests, total tokens and output tokens per second
// over the whole run are printed.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "strata/cli/bench_engine.h"
#include "strata/cli/bench_flags.h"
#include "strata/core/error.h"

namespace strata::cli {
namespace {

struct ThroughputFlags {
  OfflineBenchFlags common;
  DatasetFlags dataset;
  std::optional<int64_t> input_len, output_len;
};

std::vector<bench::BenchRequest> sample_requests(const ThroughputFlags& flags, const BenchEngine& bench) {
  DatasetFlags dataset = flags.dataset;
  if (!dataset.dataset_path.empty()) dataset.dataset_name = "sharegpt";
  if (flags.input_len) dataset.random_input_len = *flags.input_len;
  if (flags.output_len) dataset.random_output_len = *flags.output_len;
  dataset.sharegpt_output_len = flags.output_len;
  const text::Tokenizer* tokenizer = bench.text.has_text ? bench.text.tokenizer.get() : nullptr;
  return sample_dataset(dataset, tokenizer, bench.open.loaded.config.vocab_size);
}

void run_throughput(const ThroughputFlags& flags) {
  const std::unique_ptr<BenchEngine> bench = start_bench_engine(flags.common);
  const std::vector<bench::BenchRequest> dataset = sample_requests(flags, *bench);
  std::vector<GenerationRequest> requests;
  std::vector<int64_t> output_lens;
  int64_t prompt_tokens = 0, output_tokens = 0;
  for (const bench::BenchRequest& r : dataset) {
    requests.push_back({.prompt_ids = r.prompt_ids, .max_tokens = static_cast<int32_t>(r.expected_output_len),
                        .ignore_eos = true});
    output_lens.push_back(r.expected_output_len);
    prompt_tokens += r.prompt_len;
    output_tokens += r.expected_output_len;
  }
  const bench::EngineRun run = bench::run_engine_workload(*bench->engine, std::move(requests), kBenchTimeoutS);
  bench::check_exact_lengths(run, output_lens);
  const double num_requests = static_cast<double>(dataset.size()), total_tokens = static_cast<double>(prompt_tokens + output_tokens);
  fmt::print("Throughput: {:.2f} requests/s, {:.2f} total tokens/s, {:.2f} output tokens/s\n", num_requests / run.wall_s,
             total_tokens / run.wall_s, static_cast<double>(output_tokens) / run.wall_s);
  fmt::print("Total num prompt tokens:  {}\n", prompt_tokens);
  fmt::print("Total num output tokens:  {}\n", output_tokens);
  if (!flags.common.output_json.empty())
    write_json_file(flags.common.output_json, {{"elapsed_time", run.wall_s},
                                               {"num_requests", dataset.size()},
                                               {"total_num_tokens", prompt_tokens + output_tokens},
                                               {"requests_per_second", num_requests / run.wall_s},
                                               {"tokens_per_second", total_tokens / run.wall_s}});
}

}  // namespace

void add_bench_throughput_command(CLI::App& bench) {
  auto flags = std::make_shared<ThroughputFlags>();
  CLI::App* cmd = bench.add_subcommand("throughput", "requests and tokens per second, in-process (vllm bench throughput)");
  add_offline_bench_flags(*cmd, flags->common);
  cmd->add_option("--input-len", flags->input_len, "random dataset: prompt tokens per request (default 1024)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--output-len", flags->output_len,
                  "output tokens per request (random default 128; sharegpt default: each reply's length)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--num-prompts", flags->dataset.num_prompts, "requests")->check(CLI::PositiveNumber);
  cmd->add_option("--dataset-name", flags->dataset.dataset_name, "random, or sharegpt (with --dataset-path)")
      ->check(CLI::IsMember({"random", "sharegpt"}));
  cmd->add_option("--dataset-path", flags->dataset.dataset_path, "a ShareGPT JSON file (implies --dataset-name sharegpt)");
  cmd->add_option("--random-range-ratio", flags->dataset.random_range_ratio,
                  "random dataset: lengths uniform in [len * (1 - r), len * (1 + r)], r in [0, 1)");
  cmd->add_option("--seed", flags->dataset.seed, "seed of the prompts");
  cmd->callback([flags] { run_throughput(*flags); });
}

}  // namespace strata::cli
