#include "strata/cli/bench_engine.h"

#include <fmt/format.h>

#include <fstream>

#include "strata/cli/default_model.h"
#include "strata/core/error.h"

namespace strata::cli {

void add_offline_bench_flags(CLI::App& cmd, OfflineBenchFlags& flags) {
  add_model_flags(cmd, flags.model, /*model_required=*/false);
  add_engine_flags(cmd, flags.engine);
  cmd.add_option("--output-json", flags.output_json, "write the results to this JSON file");
}

BenchEngine::~BenchEngine() {
  if (engine) engine->shutdown(std::chrono::seconds(10));
}

std::unique_ptr<BenchEngine> start_bench_engine(const OfflineBenchFlags& flags) {
  ModelFlags model = flags.model;
  if (model.model.empty()) model.model = default_model_path();
  resolve_model_name(model);
  size_ssm_slots(model, flags.engine);
  model.load_progress = true;
  EngineOptions options = flags.engine;
  options.num_kv_blocks = model.num_kv_blocks;
  auto bench = std::make_unique<BenchEngine>();
  bench->open = open_model(model, options.speculative);
  bench->text = open_model_tokenizer(model.model, bench->open.loaded.config);
  capture_decode_graphs(bench->open, options, "strata bench");
  bench->engine = std::make_unique<Engine>(*bench->open.runner, *bench->text.tokenizer, bench->text.eos_token_ids, options,
                                           bench->open.draft_runner.get());
  return bench;
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  std::ofstream out(path);
  if (!(out << value.dump(4) << "\n")) fail("cannot write {}; check the --output-json path", path);
}

}  // namespace strata::cli
