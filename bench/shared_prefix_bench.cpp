// Requests that share one long system prompt and differ in a short user turn, sent one
// after another through the real engine with the prefix cache on: the cached tokens of each
// and the time to first token of the first (cold) against the third onward (warm; the second
// is where a hybrid model keeps the branch point its successors start from).
//   shared_prefix_bench [--model DIR] [--load-format dummy] [--device cpu|cuda] [--requests 8]
//     [--system-tokens 2048] [--user-tokens 64] [--output-tokens 8] [--ssm-snapshot-interval 512]
//     [--system-prompts 1] [--ssm-cache-slots 16] [--ssm-host-cache-gb 0] [--threads N]
// With more system prompts than device snapshot slots, --ssm-host-cache-gb shows the host tier.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>

#include "bench_model.h"
#include "engine_requests.h"

namespace strata {
namespace {

struct Flags {
  BenchModelFlags model{.model = STRATA_DEFAULT_SHARED_PREFIX_CONFIG, .load_format = "dummy"};
  int32_t requests = 8;
  int32_t system_tokens = 2048;
  int32_t user_tokens = 64;
  int32_t output_tokens = 8;
  int32_t ssm_snapshot_interval = 512;
  int32_t system_prompts = 1;   // requests cycle through this many system prompts
  int32_t ssm_cache_slots = 16;  // device snapshot slots
  double ssm_host_cache_gb = 0;  // the snapshots' host tier
};

void print_report(const Flags& flags, const std::vector<RequestResult>& results, const EngineStatsSnapshot& stats) {
  fmt::print("| request | prompt tokens | cached tokens | TTFT (ms) |\n|---|---|---|---|\n");
  for (size_t i = 0; i < results.size(); ++i)
    fmt::print("| {} | {} | {} | {:.1f} |\n", i + 1, flags.system_tokens + flags.user_tokens,
               results[i].cached_tokens, results[i].ttft_ms);
  std::vector<double> warm;  // each system prompt's third request on
  for (size_t i = 2 * flags.system_prompts; i < results.size(); ++i) warm.push_back(results[i].ttft_ms);
  const double cold = results.empty() ? 0 : results[0].ttft_ms;
  if (warm.empty())
    fmt::print("TTFT p50 cold (request 1) {:.1f} ms; no warm requests: pass --requests above {} "
               "(each system prompt's third request on is warm)\n", cold, 2 * flags.system_prompts);
  else
    fmt::print("TTFT p50 cold (request 1) {:.1f} ms, warm (request {} on) {:.1f} ms: {:.1f}x\n", cold,
               2 * flags.system_prompts + 1, median(warm), cold / median(warm));
  fmt::print("SSM snapshots taken {}, held {} ({:.2f} MiB)\n", stats.ssm_snapshots_taken_total, stats.ssm_snapshots,
             static_cast<double>(stats.ssm_snapshot_bytes) / (1 << 20));
  fmt::print("host tier: {} snapshots stored ({:.2f} MiB), {} hits restored ({:.2f} MiB), {} held\n",
             stats.ssm_host_stored_total, static_cast<double>(stats.ssm_host_stored_bytes_total) / (1 << 20),
             stats.ssm_host_restored_total, static_cast<double>(stats.ssm_host_restored_bytes_total) / (1 << 20),
             stats.ssm_host_snapshots);
}

int run(const Flags& flags) {
  BenchModel m = load_bench_model(flags.model);
  const int64_t request_tokens = flags.system_tokens + flags.user_tokens + flags.output_tokens;
  ModelRunner runner(*m.loaded.model, *m.backend,
                     {.num_kv_blocks = request_tokens / 16 * (flags.requests + 1) + 16, .num_ssm_slots = 24});
  Engine engine(runner, *m.tokenizer, {},
                {.ssm_cache_slots = flags.ssm_cache_slots, .ssm_snapshot_interval = flags.ssm_snapshot_interval,
                 .ssm_host_cache_gib = flags.ssm_host_cache_gb});
  const int32_t vocab = m.tokenizer->vocab_size();
  std::vector<RequestResult> results;
  for (int32_t r = 0; r < flags.requests; ++r) {
    std::vector<int32_t> prompt = make_ids(flags.system_tokens, 1000 + r % flags.system_prompts, vocab);
    const std::vector<int32_t> user = make_ids(flags.user_tokens, r + 1, vocab);
    prompt.insert(prompt.end(), user.begin(), user.end());
    results.push_back(run_request(engine, std::move(prompt), flags.output_tokens));
  }
  const EngineStatsSnapshot stats = engine.stats();
  engine.shutdown(std::chrono::seconds(10));
  fmt::print("model {} ({}), device {}, {} requests: {} shared + {} own prompt tokens, {} output tokens, "
             "--ssm-snapshot-interval {}, {} system prompts, --ssm-cache-slots {}, --ssm-host-cache-gb {}\n",
             flags.model.model, m.loaded.config.model_type, m.backend->name(), flags.requests, flags.system_tokens,
             flags.user_tokens, flags.output_tokens, flags.ssm_snapshot_interval, flags.system_prompts,
             flags.ssm_cache_slots, flags.ssm_host_cache_gb);
  print_report(flags, results, stats);
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Flags flags;
  CLI::App app{"shared system prompt: cached tokens and TTFT per request"};
  flags.model.add_to(app);  // default: bench/configs/qwen3_next_small with dummy weights
  app.add_option("--requests", flags.requests)->check(CLI::PositiveNumber);
  app.add_option("--system-tokens", flags.system_tokens)->check(CLI::PositiveNumber);
  app.add_option("--user-tokens", flags.user_tokens)->check(CLI::PositiveNumber);
  app.add_option("--output-tokens", flags.output_tokens)->check(CLI::PositiveNumber);
  app.add_option("--ssm-snapshot-interval", flags.ssm_snapshot_interval)->check(CLI::NonNegativeNumber);
  app.add_option("--system-prompts", flags.system_prompts, "requests cycle through this many system prompts")
      ->check(CLI::PositiveNumber);
  app.add_option("--ssm-cache-slots", flags.ssm_cache_slots)->check(CLI::NonNegativeNumber);
  app.add_option("--ssm-host-cache-gb", flags.ssm_host_cache_gb)->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    return strata::run(flags);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
