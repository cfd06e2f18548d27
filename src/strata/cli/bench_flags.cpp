#include "strata/cli/bench_flags.h"

#include "strata/core/error.h"

namespace strata::cli {

void add_dataset_flags(CLI::App& cmd, DatasetFlags& f) {
  cmd.add_option("--dataset-name", f.dataset_name, "random, or sharegpt (with --dataset-path)")
      ->check(CLI::IsMember({"random", "sharegpt"}));
  cmd.add_option("--dataset-path", f.dataset_path, "a ShareGPT JSON file (conversations' first two turns)");
  cmd.add_option("--num-prompts", f.num_prompts, "requests to send")->check(CLI::PositiveNumber);
  cmd.add_option("--random-input-len", f.random_input_len, "random dataset: prompt tokens")->check(CLI::PositiveNumber);
  cmd.add_option("--random-output-len", f.random_output_len, "random dataset: output tokens")->check(CLI::PositiveNumber);
  cmd.add_option("--random-range-ratio", f.random_range_ratio,
                 "random dataset: lengths uniform in [len * (1 - r), len * (1 + r)], r in [0, 1)");
  cmd.add_option("--random-prefix-len", f.random_prefix_len, "random dataset: tokens every prompt starts with")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--sharegpt-output-len", f.sharegpt_output_len, "sharegpt: output tokens (default: each reply's length)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--seed", f.seed, "seed of the prompts and of the arrival times");
}

std::vector<bench::BenchRequest> sample_dataset(const DatasetFlags& f, const text::Tokenizer* tokenizer,
                                                int64_t vocab_size) {
  if (f.dataset_name == "sharegpt") {
    if (f.dataset_path.empty()) fail("--dataset-name sharegpt needs --dataset-path (a ShareGPT JSON file)");
    if (tokenizer == nullptr) fail("--dataset-name sharegpt needs the model's tokenizer to measure the prompts");
    return bench::sample_sharegpt_requests(
        {.path = f.dataset_path, .num_requests = f.num_prompts, .output_len = f.sharegpt_output_len, .seed = f.seed},
        *tokenizer);
  }
  return bench::sample_random_requests({.num_requests = f.num_prompts,
                                        .input_len = f.random_input_len,
                                        .output_len = f.random_output_len,
                                        .range_ratio = f.random_range_ratio,
                                        .prefix_len = f.random_prefix_len,
                                        .seed = f.seed},
                                       tokenizer, vocab_size);
}

}  // namespace strata::cli
