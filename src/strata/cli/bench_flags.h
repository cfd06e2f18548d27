// The dataset flags `strata bench serve` and `strata bench throughput` share (vLLM's names),
// and sampling the requests they describe.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/bench/bench_dataset.h"

namespace strata::cli {

struct DatasetFlags {
  std::string dataset_name = "random";  // random or sharegpt
  std::string dataset_path;             // the ShareGPT JSON file
  int64_t num_prompts = 1000;
  int64_t random_input_len = 1024, random_output_len = 128, random_prefix_len = 0;
  double random_range_ratio = 0.0;
  std::optional<int64_t> sharegpt_output_len;
  uint64_t seed = 0;
};

void add_dataset_flags(CLI::App& command, DatasetFlags& flags);

// tokenizer may be null for random prompts of token ids from [0, vocab_size).
std::vector<bench::BenchRequest> sample_dataset(const DatasetFlags& flags, const text::Tokenizer* tokenizer,
                                                int64_t vocab_size);

}  // namespace strata::cli
