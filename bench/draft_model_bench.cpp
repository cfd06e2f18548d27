// Speculative decoding with a draft model: output tokens/s against acceptance, for each k and
// batch size, beside plain decoding in the same run. Acceptance is controlled: the draft
// (by default the target itself, acceptance 1.0) has each proposal replaced by another token
// with probability 1 - a (SpeculativeOptions::draft_corruption), so a draft is accepted at a.
// Greedy requests, random prompts, ignore_eos; one JSON line per configuration.
//   draft_model_bench --model DIR [--draft DIR] [--load-format dummy] [--device cpu|cuda]
//     [--k 1,3,5] [--acceptance 1,0.7,0.4,0] [--batch 1,8] [--prompt-tokens 32] [--output-tokens 64] [--json F]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <random>
#include <thread>

#include "strata/bench/engine_workload.h"
#include "strata/core/error.h"
#include "strata/engine/engine.h"
#include "strata/model/model_loader.h"
#include "strata/text/id_tokenizer.h"

namespace strata {
namespace {

struct Flags {
  std::string model, draft, load_format = "auto", device = "cpu", json;
  int threads = 0;
  std::vector<int32_t> k = {1, 3, 5};
  std::vector<double> acceptance = {1.0, 0.7, 0.4, 0.0};
  std::vector<int32_t> batch = {1, 8};
  int32_t prompt_tokens = 32, output_tokens = 64;
};

struct Models {
  std::unique_ptr<Backend> backend;
  LoadedModel target, draft;
  std::unique_ptr<ModelRunner> target_runner, draft_runner;
  std::unique_ptr<text::Tokenizer> tokenizer;
};

Models open_models(const Flags& flags) {
  Models m;
  const int threads = flags.threads > 0 ? flags.threads : static_cast<int>(std::thread::hardware_concurrency());
  m.backend = flags.device == "cuda" ? make_cuda_backend(0) : make_cpu_backend(threads);
  if (!m.backend) fail("--device cuda: no CUDA backend or GPU here; use --device cpu");
  const LoadFormat format = parse_load_format(flags.load_format);
  m.target = load_model({.model_path = flags.model, .load_format = format}, *m.backend);
  m.draft = load_model({.model_path = flags.draft.empty() ? flags.model : flags.draft, .load_format = format},
                       *m.backend);
  int32_t max_batch = 1;
  for (int32_t b : flags.batch) max_batch = std::max(max_batch, b);
  const int64_t blocks = max_batch * ((flags.prompt_tokens + flags.output_tokens + 16) / 16 + 1) + 16;
  const RunnerOptions options{.num_kv_blocks = blocks, .num_ssm_slots = 2 * int64_t{max_batch} + 2};
  m.target_runner = std::make_unique<ModelRunner>(*m.target.model, *m.backend, options);
  m.draft_runner = std::make_unique<ModelRunner>(*m.draft.model, *m.backend, options);
  m.tokenizer = text::make_id_tokenizer(static_cast<int32_t>(m.target.config.vocab_size));
  return m;
}

struct Measured {
  double output_tok_s = 0;
  double acceptance = 0;       // accepted / proposed drafts
  double tokens_per_step = 1;  // output tokens per verify row
};

Measured measure(Models& m, const Flags& flags, int32_t batch, int32_t k, double acceptance) {
  EngineOptions options{.max_num_seqs = std::max(batch, 1), .enable_prefix_caching = false};
  if (k > 0)
    options.speculative = {.num_speculative_tokens = k, .method = SpeculativeMethod::kDraftModel,
                           .draft_model = flags.draft, .draft_corruption = 1.0 - acceptance};
  Engine engine(*m.target_runner, *m.tokenizer, {}, options, k > 0 ? m.draft_runner.get() : nullptr);
  std::mt19937 rng(static_cast<uint32_t>(batch));
  std::uniform_int_distribution<int32_t> id(5, static_cast<int32_t>(m.target.config.vocab_size) - 6);
  std::vector<GenerationRequest> requests(static_cast<size_t>(batch));
  for (GenerationRequest& r : requests) {
    for (int32_t i = 0; i < flags.prompt_tokens; ++i) r.prompt_ids.push_back(id(rng));
    r = {.prompt_ids = r.prompt_ids, .sampling = {.temperature = 0}, .max_tokens = flags.output_tokens,
         .ignore_eos = true};
  }
  const bench::EngineRun run = bench::run_engine_workload(engine, requests, 3600);
  bench::check_exact_lengths(run, std::vector<int64_t>(requests.size(), flags.output_tokens));
  const EngineStatsSnapshot s = engine.stats();
  engine.shutdown(std::chrono::seconds(10));
  Measured out{.output_tok_s = static_cast<double>(batch) * flags.output_tokens / run.wall_s};
  if (s.spec_draft_tokens_total > 0) {
    out.acceptance = static_cast<double>(s.spec_accepted_tokens_total) / static_cast<double>(s.spec_draft_tokens_total);
    out.tokens_per_step = static_cast<double>(s.spec_accepted_tokens_total + s.spec_num_drafts_total) /
                          static_cast<double>(s.spec_num_drafts_total);
  }
  return out;
}

void report(const Flags& flags, const std::string& line) {
  fmt::print("{}\n", line);
  if (flags.json.empty()) return;
  std::ofstream out(flags.json, std::ios::app);
  if (!(out << line << "\n")) fail("cannot append to --json file '{}'", flags.json);
}

int run(const Flags& flags) {
  Models m = open_models(flags);
  measure(m, flags, 1, 1, 1.0);  // warm-up: workspaces (and graphs) settle
  for (int32_t batch : flags.batch) {
    const Measured plain = measure(m, flags, batch, 0, 1.0);
    report(flags, fmt::format(R"({{"bench":"draft_model","device":"{}","batch":{},"k":0,"output_tok_s":{:.1f}}})",
                              m.backend->name(), batch, plain.output_tok_s));
    for (int32_t k : flags.k)
      for (double a : flags.acceptance) {
        const Measured spec = measure(m, flags, batch, k, a);
        report(flags, fmt::format(R"({{"bench":"draft_model","device":"{}","batch":{},"k":{},"target_acceptance":{},)"
                                  R"("acceptance":{:.3f},"tokens_per_verify":{:.2f},"output_tok_s":{:.1f},)"
                                  R"("speedup":{:.2f}}})",
                                  m.backend->name(), batch, k, a, spec.acceptance, spec.tokens_per_step,
                                  spec.output_tok_s, spec.output_tok_s / plain.output_tok_s));
      }
  }
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  strata::Flags flags;
  CLI::App app{"draft-model speculative decoding: tokens/s against acceptance"};
  app.add_option("--model", flags.model, "target model folder")->required();
  app.add_option("--draft", flags.draft, "draft model folder (default: the target, acceptance 1.0)");
  app.add_option("--load-format", flags.load_format, "auto, or dummy (random weights; same seed for both models)");
  app.add_option("--device", flags.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--threads", flags.threads, "CPU threads (0: all cores)");
  app.add_option("--k", flags.k, "num_speculative_tokens values")->delimiter(',');
  app.add_option("--acceptance", flags.acceptance, "controlled per-draft acceptance values in [0, 1]")->delimiter(',');
  app.add_option("--batch", flags.batch, "concurrent requests")->delimiter(',');
  app.add_option("--prompt-tokens", flags.prompt_tokens, "prompt length");
  app.add_option("--output-tokens", flags.output_tokens, "output tokens per request");
  app.add_option("--json", flags.json, "append the JSON lines to this file");
  CLI11_PARSE(app, argc, argv);
  try {
    return strata::run(flags);
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
}
