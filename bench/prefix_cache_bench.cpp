// Multi-turn chat workload through the real engine: every turn resends the whole
// conversation (previous prompt + the model's answer + a new user message). Prints the
// time to first token of each turn with the prefix cache on and off.
//   prefix_cache_bench --model PATH [--load-format dummy] [--device cpu|cuda] [--turns 8]
//                      [--user-tokens 96] [--answer-tokens 32] [--threads N]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>

#include "bench_model.h"
#include "engine_requests.h"

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
    const std::vector<int32_t> user = make_ids(flags.user_tokens, t, vocab);
    conversation.insert(conversation.end(), user.begin(), user.end());
    const RequestResult r = run_request(engine, conversation, flags.answer_tokens);
    const Turn turn{.ttft_ms = r.ttft_ms, .prompt_tokens = static_cast<int32_t>(conversation.size()),
                    .cached_tokens = r.cached_tokens};
    conversation.insert(conversation.end(), r.output_ids.begin(), r.output_ids.end());
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
