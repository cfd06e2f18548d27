// `strata generate --model DIR --prompt-ids 1,2,3`: generates token ids and prints them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>

#include "strata/cli/engine_flags.h"
#include "strata/cli/model_flags.h"
#include "strata/cli/sampling_flags.h"
#include "strata/core/error.h"
#include "strata/engine/local_engine.h"
#include "strata/text/id_tokenizer.h"

namespace strata::cli {
namespace {

struct GenerateFlags {
  ModelFlags model;
  SamplingFlags sampling;
  SpeculativeOptions speculative;
  std::string prompt_ids;
  bool timing = false;
};

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

void run_generate(const GenerateFlags& flags) {
  const SamplingParams sampling = to_sampling_params(flags.sampling);
  ModelFlags model = flags.model;
  if (serve_as_other_rank(model)) return;
  model.load_progress = true;
  OpenModel open = open_model(model, flags.speculative);
  GenerationRequest request{.prompt_ids = parse_id_list(flags.prompt_ids, "--prompt-ids"),
                            .sampling = sampling,
                            .max_tokens = flags.sampling.max_tokens,
                            .ignore_eos = flags.sampling.ignore_eos};
  for (int32_t t : request.prompt_ids)
    if (t >= open.loaded.config.vocab_size)
      fail("--prompt-ids: id {} is outside the vocabulary ({} tokens)", t, open.loaded.config.vocab_size);
  // Ids in, ids out: the id tokenizer stands in for the model's (the engine's text is unused).
  const auto ids = text::make_id_tokenizer(static_cast<int32_t>(open.loaded.config.vocab_size));
  const auto& eos = open.loaded.config.eos_token_ids;
  EngineOptions options = LocalEngine::single_sequence_options();
  options.speculative = flags.speculative;
  LocalEngine engine(*open.runner, *ids, {eos.begin(), eos.end()}, options, open.draft_runner.get());
  // Decode time runs from the first sampled token (prefill done) to the last one.
  const Clock::time_point start = Clock::now();
  Clock::time_point first, last;
  const std::vector<int32_t> out = engine.generate(request, [&](int32_t) {
    last = Clock::now();
    if (first == Clock::time_point{}) first = last;
    return true;
  });
  fmt::print("{}\n", fmt::join(out, ","));
  if (flags.timing && !out.empty()) {
    const double decode_ms = ms_between(first, last);
    const auto decode_steps = static_cast<double>(out.size() - 1);
    fmt::print(stderr, "prefill {} tokens {:.1f} ms; decode {} steps {:.1f} ms, {:.1f} tokens/s\n",
               request.prompt_ids.size(), ms_between(start, first), out.size() - 1, decode_ms,
               decode_ms > 0 ? decode_steps * 1000.0 / decode_ms : 0.0);
  }
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto flags = std::make_shared<GenerateFlags>();
  CLI::App* cmd = app.add_subcommand("generate", "generate tokens from a prompt");
  add_model_flags(*cmd, flags->model);
  add_parallel_flags(*cmd, flags->model);
  add_sampling_flags(*cmd, flags->sampling);
  add_speculative_config_flag(*cmd, flags->speculative);
  cmd->add_option("--prompt-ids", flags->prompt_ids, "comma-separated prompt token ids")->required();
  cmd->add_flag("--timing", flags->timing, "print prefill time and decode tokens/s to stderr");
  cmd->callback([flags] { run_generate(*flags); });
}

}  // namespace strata::cli
