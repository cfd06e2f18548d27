// Multi-turn chat workload through the real engine: every turn resends the whole
// conversation (previous prompt + the model's answer + a new user message). Prints the
// time to first token of each turn with the prefix cache on and off.
//   prefix_cache_bench --model PATH [--load-format dummy] [--device cpu|cuda] [--turns 8]
//                      [--user-tokens 96] [--answer-tokens 32] [--threads N]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>

#include "bench_model.h"
#include "strata/engine/engine.h"

namespace strata {
namespace {

struct Flags {
  BenchModelFlags model;
  int turns = 8;
  int user_tokens = 96;
  int answer_tokens = 32;
};

struct Turn {
  double ttft_ms = 0;
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;
};

std::vector<Turn> run_conversation(ModelRunner& runner, const text::Tokenizer& tokenizer, const Flags& flags,
                                   bool caching) {
  Engine engine(runner, tokenizer, {}, {.enable_prefix_caching = caching});
  std::vector<int32_t> conversation;
  std::vector<Turn> turns;
  const int32_t vocab = tokenizer.vocab_size();
  for (int t = 0; t < flags.turns; ++t) {
    for (int i = 0; i < flags.user_tokens; ++i) conversation.push_back((t * 7919 + i * 131 + 11) % (vocab - 10) + 5);
    const auto start = std::chrono::steady_clock::now();
    auto stream = engine.submit({.prompt_ids = conversation, .sampling = {.temperature = 0},
                                 .max_tokens = flags.answer_tokens, .ignore_eos = true});
    Turn turn{.prompt_tokens = static_cast<int32_t>(conversation.size())};
    bool first = true;
    while (auto update = stream->pop(std::chrono::minutes(10))) {
      if (first && !update->deltas.empty()) {
        turn.ttft_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        first = false;
      }
      for (const ChoiceDelta& d : update->deltas) conversation.insert(conversation.end(), d.token_ids.begin(), d.token_ids.end());
      turn.cached_tokens = update->num_cached_tokens;
      if (update->finished) break;
    }
    turns.push_back(turn);
  }
  engine.shutdown(std::chrono::seconds(10));
  return turns;
}

int run(const Flags& flags) {
  BenchModel m = load_bench_model(flags.model);
  const int64_t max_tokens = flags.turns * (flags.user_tokens + flags.answer_tokens) + 64;
  ModelRunner runner(*m.loaded.model, *m.backend, {.num_kv_blocks = 4 * (max_tokens / 16 + 1), .num_ssm_slots = 40});
  const std::vector<Turn> off = run_conversation(runner, *m.tokenizer, flags, false);
  const std::vector<Turn> on = run_conversation(runner, *m.tokenizer, flags, true);
  fmt::print("model {} ({}), device {}, {} turns of +{} user / {} answer tokens\n", flags.model.model,
             m.loaded.config.model_type, m.backend->name(), flags.turns, flags.user_tokens, flags.answer_tokens);
  fmt::print("| turn | prompt tokens | TTFT no cache (ms) | TTFT cache (ms) | cached tokens | speedup |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (int t = 0; t < flags.turns; ++t)
    fmt::print("| {} | {} | {:.1f} | {:.1f} | {} | {:.2f}x |\n", t + 1, on[t].prompt_tokens, off[t].ttft_ms,
               on[t].ttft_ms, on[t].cached_tokens, off[t].ttft_ms / on[t].ttft_ms);
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Flags flags;
  CLI::App app{"multi-turn TTFT with and without the prefix cache"};
  flags.model.add_to(app);
  app.get_option("--model")->required();
  app.add_option("--turns", flags.turns);
  app.add_option("--user-tokens", flags.user_tokens);
  app.add_option("--answer-tokens", flags.answer_tokens);
  CLI11_PARSE(app, argc, argv);
  try {
    return strata::run(flags);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
