// Encode throughput (MB/s, one thread) of the fixture tokenizers on ~1 MB of deterministic
// English-like text. `--write_text=PATH` saves that text (bench/tokenizer_hf.py times Hugging
// Face tokenizers on it); `--tokenizers_dir=DIR` points at the fixture tarballs.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/text/tokenizer.h"

namespace {

namespace fs = std::filesystem;

std::string g_tokenizers_dir = (fs::path(__FILE__).parent_path() / "../../shared/fixtures/tokenizers").string();

const char* const kSentences[] = {
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world!",
    "I'm you're he'll they've we'd it's DON'T Can't",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "Numbers: 1 12 123 1234 12345 3.14159 -42 1e10 0x1F",
    "The committee met on a grey Tuesday morning to weigh the harbour proposal once more.",
    "Nobody could say with certainty whether the old bridge would survive another winter,",
    "but the engineers, having measured every beam twice, were cautiously optimistic.",
    "Meanwhile the town's bakers argued about flour prices, and the schoolchildren",
    "collected chestnuts along the river path, counting them in dozens and scores.",
    "In the evening, lamps were lit in the square; someone played a violin badly but with feeling.",
    "Questions remained: who would pay, how long would it take, and what would the sea do?",
};

// Sentences drawn with a fixed seed, so the word mix varies like prose but is repeatable.
std::string english_text(size_t num_bytes) {
  std::mt19937 rng(1234);
  std::uniform_int_distribution<size_t> pick(0, std::size(kSentences) - 1);
  std::uniform_int_distribution<int> number(0, 99999);
  std::string text;
  while (text.size() < num_bytes) {
    text += kSentences[pick(rng)];
    text += (rng() % 7 == 0) ? fmt::format(" ({} items)\n\n", number(rng)) : " ";
  }
  return text;
}

const std::string& bench_text() {
  static const std::string text = english_text(1 << 20);
  return text;
}

std::unique_ptr<strata::text::Tokenizer> load(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / "strata_tokenizer_bench" / name;
  if (!fs::exists(dir / "tokenizer.json")) {
    fs::create_directories(dir);
    const std::string cmd = fmt::format("tar -xzf '{}/{}.tar.gz' -C '{}'", g_tokenizers_dir, name, dir.string());
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("cannot unpack " + name);
  }
  return strata::text::Tokenizer::from_file(dir.string());
}

void BM_Encode(benchmark::State& state, const std::string& name) {
  const auto tokenizer = load(name);
  const std::string& text = bench_text();
  size_t num_tokens = 0;
  for (auto _ : state) {
    const auto ids = tokenizer->encode(text, false);
    num_tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(num_tokens);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--write_text=", 0) == 0) {
      std::ofstream(arg.substr(13), std::ios::binary) << bench_text();
      return 0;
    }
    if (arg.rfind("--tokenizers_dir=", 0) == 0) g_tokenizers_dir = arg.substr(17);
  }
  for (const char* name : {"qwen3", "llama3_1", "llama2", "deepseek_v3"})
    benchmark::RegisterBenchmark(fmt::format("encode_1MB/{}", name).c_str(), BM_Encode, std::string(name))
        ->Unit(benchmark::kMillisecond)->MinTime(1.0);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
