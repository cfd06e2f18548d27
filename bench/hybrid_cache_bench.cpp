// Two prefix-cache workloads of issue 15 through the real engine, one request at a time:
//  multi-turn: one conversation grown in turns of --user-tokens (+ the answer) up to
//    --context-tokens; each turn's TTFT with the cache, and cold (the same prompt on an engine
//    without the cache) every --cold-every turns and at the last;
//  agent-tree: --branches branches from one --context-tokens context, each continued --turns
//    turns, turn by turn across the branches: prefill tokens computed against sent.
//   hybrid_cache_bench --workload multi-turn|agent-tree [--model DIR] [--load-format dummy]
//     [--device cpu|cuda] [--context-tokens N] [--user-tokens N] [--answer-tokens N]
//     [--cold-every N] [--branches N] [--turns N] [--ssm-snapshot-interval N] [--threads N]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <string>

#include "bench_model.h"
#include "engine_requests.h"

namespace strata {
namespace {

struct Flags {
  BenchModelFlags model{.model = STRATA_DEFAULT_SHARED_PREFIX_CONFIG, .load_format = "dummy"};
  std::string workload = "multi-turn";
  int32_t context_tokens = 32768;  // multi-turn: where the conversation stops; agent-tree: the shared root
  int32_t user_tokens = 512;
  int32_t answer_tokens = 32;
  int32_t cold_every = 16;
  int32_t branches = 8;
  int32_t turns = 4;
  int32_t ssm_snapshot_interval = 512;
};

EngineOptions cache_options(const Flags& flags, bool caching) {
  return {.enable_prefix_caching = caching, .ssm_snapshot_interval = flags.ssm_snapshot_interval};
}

void print_snapshots(const EngineStatsSnapshot& stats) {
  fmt::print("SSM snapshots taken {}, held {} ({:.2f} MiB)\n", stats.ssm_snapshots_taken_total, stats.ssm_snapshots,
             static_cast<double>(stats.ssm_snapshot_bytes) / (1 << 20));
}

void multi_turn(ModelRunner& runner, const text::Tokenizer& tokenizer, const Flags& flags) {
  const int32_t vocab = tokenizer.vocab_size();
  std::vector<int32_t> conversation = make_ids(flags.user_tokens, 1, vocab);
  std::vector<RequestResult> warm;
  std::vector<std::vector<int32_t>> cold_prompts;
  std::vector<size_t> cold_turns;
  {
    Engine engine(runner, tokenizer, {}, cache_options(flags, true));
    for (int32_t t = 0; static_cast<int32_t>(conversation.size()) <= flags.context_tokens; ++t) {
      const bool last = static_cast<int32_t>(conversation.size()) + flags.answer_tokens + flags.user_tokens >
                        flags.context_tokens;
      if (t % flags.cold_every == 0 || last) cold_prompts.push_back(conversation), cold_turns.push_back(warm.size());
      warm.push_back(run_request(engine, conversation, flags.answer_tokens));
      conversation.insert(conversation.end(), warm.back().output_ids.begin(), warm.back().output_ids.end());
      const std::vector<int32_t> user = make_ids(flags.user_tokens, t + 2, vocab);
      conversation.insert(conversation.end(), user.begin(), user.end());
    }
    print_snapshots(engine.stats());
    engine.shutdown(std::chrono::seconds(10));
  }
  Engine cold_engine(runner, tokenizer, {}, cache_options(flags, false));
  fmt::print("| turn | prompt tokens | cached tokens | TTFT cache (ms) | TTFT cold (ms) | cold / cache |\n"
             "|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < cold_prompts.size(); ++i) {
    const RequestResult& w = warm[cold_turns[i]];
    const double cold = run_request(cold_engine, cold_prompts[i], 1).ttft_ms;
    fmt::print("| {} | {} | {} | {:.1f} | {:.1f} | {:.1f}x |\n", cold_turns[i] + 1, cold_prompts[i].size(),
               w.cached_tokens, w.ttft_ms, cold, cold / w.ttft_ms);
  }
  std::vector<double> warm_ttft;
  for (size_t i = 1; i < warm.size(); ++i) warm_ttft.push_back(warm[i].ttft_ms);
  fmt::print("{} turns; TTFT p50 with the cache from turn 2 on: {:.1f} ms\n", warm.size(), median(warm_ttft));
  cold_engine.shutdown(std::chrono::seconds(10));
}

void agent_tree(ModelRunner& runner, const text::Tokenizer& tokenizer, const Flags& flags) {
  const int32_t vocab = tokenizer.vocab_size();
  const std::vector<int32_t> root = make_ids(flags.context_tokens, 7, vocab);
  std::vector<std::vector<int32_t>> branches(flags.branches, root);
  Engine engine(runner, tokenizer, {}, cache_options(flags, true));
  int64_t sent = 0, computed = 0;
  std::vector<double> later_ttft;
  double first_ttft = 0;
  for (int32_t turn = 0; turn < flags.turns; ++turn) {
    for (int32_t b = 0; b < flags.branches; ++b) {
      const std::vector<int32_t> user = make_ids(flags.user_tokens, 100 + turn * flags.branches + b, vocab);
      branches[b].insert(branches[b].end(), user.begin(), user.end());
      const RequestResult r = run_request(engine, branches[b], flags.answer_tokens);
      sent += static_cast<int64_t>(branches[b].size());
      computed += static_cast<int64_t>(branches[b].size()) - r.cached_tokens;
      (turn == 0 && b == 0 ? first_ttft : later_ttft.emplace_back()) = r.ttft_ms;
      branches[b].insert(branches[b].end(), r.output_ids.begin(), r.output_ids.end());
    }
  }
  fmt::print("{} branches x {} turns from a {}-token root (+{} user, {} answer tokens a turn)\n", flags.branches,
             flags.turns, flags.context_tokens, flags.user_tokens, flags.answer_tokens);
  fmt::print("prefill tokens sent {}, computed with the cache {} ({:.1f}% of them; without it: all)\n", sent,
             computed, 100.0 * static_cast<double>(computed) / static_cast<double>(sent));
  fmt::print("TTFT first request {:.1f} ms, p50 of the rest {:.1f} ms\n", first_ttft, median(later_ttft));
  print_snapshots(engine.stats());
  engine.shutdown(std::chrono::seconds(10));
}

int run(const Flags& flags) {
  BenchModel m = load_bench_model(flags.model);
  const int64_t tokens = flags.workload == "multi-turn"
                             ? 2 * (flags.context_tokens + flags.user_tokens + flags.answer_tokens)
                             : flags.context_tokens + flags.branches * flags.turns * (flags.user_tokens + flags.answer_tokens);
  ModelRunner runner(*m.loaded.model, *m.backend, {.num_kv_blocks = tokens / 16 + 64, .num_ssm_slots = 24});
  fmt::print("model {} ({}), device {}, workload {}, --ssm-snapshot-interval {}\n", flags.model.model,
             m.loaded.config.model_type, m.backend->name(), flags.workload, flags.ssm_snapshot_interval);
  if (flags.workload == "multi-turn") {
    multi_turn(runner, *m.tokenizer, flags);
  } else {
    agent_tree(runner, *m.tokenizer, flags);
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Flags flags;
  CLI::App app{"prefix-cache workloads: a long multi-turn conversation, an agent tree"};
  flags.model.add_to(app);  // default: bench/configs/qwen3_next_small with dummy weights
  app.add_option("--workload", flags.workload)->check(CLI::IsMember({"multi-turn", "agent-tree"}));
  app.add_option("--context-tokens", flags.context_tokens)->check(CLI::PositiveNumber);
  app.add_option("--user-tokens", flags.user_tokens)->check(CLI::PositiveNumber);
  app.add_option("--answer-tokens", flags.answer_tokens)->check(CLI::PositiveNumber);
  app.add_option("--cold-every", flags.cold_every, "multi-turn: measure the cold TTFT every N turns")
      ->check(CLI::PositiveNumber);
  app.add_option("--branches", flags.branches)->check(CLI::PositiveNumber);
  app.add_option("--turns", flags.turns)->check(CLI::PositiveNumber);
  app.add_option("--ssm-snapshot-interval", flags.ssm_snapshot_interval)->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return strata::run(flags);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
