#include "strata/cli/engine_flags.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "strata/engine/engine.h"
#include "strata/engine/speculative_config.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/id_tokenizer.h"
#include "strata/text/load_tokenizer.h"

namespace strata::cli {

void add_speculative_config_flag(CLI::App& cmd, SpeculativeOptions& speculative) {
  cmd.add_option_function<std::string>(
      "--speculative-config", [&speculative](const std::string& json) { speculative = parse_speculative_config(json); },
      R"(speculative decoding, vLLM's JSON: '{"method": "ngram", "num_speculative_tokens": 3}', a draft model with the same vocabulary '{"model": PATH, "num_speculative_tokens": 3}', the checkpoint's multi-token-prediction layers (Qwen3-Next, Qwen3.5) '{"method": "mtp", "num_speculative_tokens": 2}', or an EAGLE-3 head '{"method": "eagle3", "model": HEAD_PATH, "num_speculative_tokens": 3}')");
}

void add_engine_flags(CLI::App& cmd, EngineOptions& engine) {
  cmd.add_option("--max-num-batched-tokens", engine.max_num_batched_tokens, "token budget of one engine step")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-num-seqs", engine.max_num_seqs, "sequences running at once")->check(CLI::Range(1, kMaxNumSeqs));
  cmd.add_flag("--enable-chunked-prefill,!--no-enable-chunked-prefill", engine.enable_chunked_prefill,
               "split long prompts over several steps (default on)");
  cmd.add_option("--max-model-len", engine.max_model_len, "context length (0: the model's)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", engine.enable_prefix_caching,
               "reuse the KV blocks (and SSM snapshots) of earlier prompts (default on)");
  cmd.add_flag_function(
         "--async-scheduling,!--no-async-scheduling",
         [&engine](int64_t count) { engine.async_scheduling = count > 0; },
         "queue each step before reading the previous step's tokens back (default: on with a GPU, off on the CPU)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_speculative_config_flag(cmd, engine.speculative);
  cmd.add_option("--swap-space", engine.swap_space_gib,
                 "GiB of host memory (pinned on a GPU) preempted sequences' KV blocks and SSM states move to, "
                 "so they resume without recomputing; 0: preemption recomputes (default 4)")
      ->check(CLI::Range(0.0, kMaxSwapSpaceGib));
  cmd.add_option("--ssm-host-cache-gb", engine.ssm_host_cache_gib,
                 "hybrid models: GiB of host memory (pinned on a GPU) that prefix-cache SSM snapshots move to when "
                 "they lose their device slot, and that hits restore from; 0 off (default)")
      ->check(CLI::Range(0.0, kMaxSwapSpaceGib));
  cmd.add_option("--ssm-cache-slots", engine.ssm_cache_slots, "SSM state snapshots the prefix cache keeps (hybrid models)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--ssm-snapshot-interval", engine.ssm_snapshot_interval,
                 "hybrid models: keep the SSM state every this many prompt tokens (rounded to 16-token "
                 "blocks) for prefix-cache hits; 0 off (default 512)")
      ->check(CLI::NonNegativeNumber);
}

void size_ssm_slots(ModelFlags& model, const EngineOptions& engine) {
  model.num_ssm_slots = 2 * engine.max_num_seqs + engine.ssm_cache_slots;
}

void capture_decode_graphs(OpenModel& open, const EngineOptions& engine, const std::string& who) {
  if (open.backend->device().is_cpu() || open.loaded.config.pooler) return;  // pooling models never decode
  const auto start = std::chrono::steady_clock::now();
  const int64_t graphs = open.runner->capture_decode_graphs(engine.max_num_seqs);
  fmt::print("{}: captured {} decode CUDA graphs in {:.2f} s\n", who, graphs,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace strata::cli
