// `strata bench serve`: `vllm bench serve`'s client in the strata binary. It sends a dataset's
// prompts to a running OpenAI-compatible server, streamed, at a Poisson (or gamma) rate and/or
// a concurrency cap, then prints TTFT, TPOT, ITL, E2E latency and throughputs in vLLM's layout
// and saves vLLM's result JSON.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>

#include <CLI/CLI.hpp>

#include "strata/bench/arrival_schedule.h"
#include "strata/bench/serve_report.h"
#include "strata/bench/serve_run.h"
#include "strata/bench/server_info.h"
#include "strata/cli/bench_flags.h"
#include "strata/core/error.h"
#include "strata/core/model_config.h"
#include "strata/text/load_tokenizer.h"

namespace strata::cli {
namespace {

struct BenchServeFlags {
  std::string base_url, host = "127.0.0.1";
  int port = 8000;
  std::string backend = "vllm";  // vllm and openai: /v1/completions; openai-chat: /v1/chat/completions
  std::string endpoint;         // default: the backend's
  std::string model, served_model_name, tokenizer;
  DatasetFlags dataset;
  std::string request_rate = "inf";
  double burstiness = 1.0;
  std::optional<int64_t> max_concurrency;
  bool ignore_eos = false;
  std::string percentile_metrics = "ttft,tpot,itl", metric_percentiles = "99";
  bool save_result = false, save_detailed = false;
  std::string result_dir, result_filename, label;
  std::vector<std::string> metadata;  // KEY=VALUE pairs saved with the result
  std::vector<std::string> goodput;   // ttft:MS tpot:MS e2el:MS
  double temperature = 0.0;
  bool disable_tqdm = false;  // no progress lines on stderr
};

std::string endpoint_of(const BenchServeFlags& flags) {
  if (!flags.endpoint.empty()) return flags.endpoint;
  return flags.backend == "openai-chat" ? "/v1/chat/completions" : "/v1/completions";
}

double parse_request_rate(const std::string& text) {
  if (text == "inf") return INFINITY;
  size_t used = 0;
  double rate = 0;
  try {
    rate = std::stod(text, &used);
  } catch (const std::exception&) {
  }
  if (used != text.size() || !(rate > 0)) fail("--request-rate: '{}' is not a rate; give requests/s above 0, or inf", text);
  return rate;
}

struct PromptTokens {
  std::unique_ptr<text::Tokenizer> tokenizer;  // null: token-id prompts from [0, vocab_size)
  int64_t vocab_size = 0;
};

// The tokenizer makes the prompts and counts their tokens: --tokenizer, else --model when it
// is a local path, else the files the server says it serves (it usually runs on this machine).
// A model folder without tokenizer.json (dummy-weight configs) gets token-id prompts.
PromptTokens find_tokenizer(const BenchServeFlags& flags, const std::string& served_root) {
  namespace fs = std::filesystem;
  for (const std::string& path : {flags.tokenizer, flags.model, served_root}) {
    if (path.empty() || (path != flags.tokenizer && !fs::exists(path))) continue;
    const fs::path folder = path;
    if (fs::is_directory(folder) && !fs::exists(folder / "tokenizer.json") && fs::exists(folder / "config.json")) {
      const int64_t vocab_size = ModelConfig::from_file((folder / "config.json").string()).vocab_size;
      fmt::print("note: {} has no tokenizer.json; sending token-id prompts (vocabulary of {})\n", path, vocab_size);
      return {.vocab_size = vocab_size};
    }
    return {.tokenizer = text::load_tokenizer(path)};
  }
  fail("bench serve needs the model's tokenizer to build prompts: pass --tokenizer (a tokenizer.json, a model "
       "folder holding one, or a .gguf)");
}

// Python's str() of a float, as vLLM's file names and JSON carry it: 10.0, 2.5, inf.
std::string python_float(double v) {
  if (std::isinf(v)) return "inf";
  return v == std::floor(v) && std::abs(v) < 1e15 ? fmt::format("{:.1f}", v) : fmt::format("{}", v);
}

std::string now_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", &local);
  return text;
}

// --metadata KEY=VALUE ... as a JSON object, checked before the run rather than after it.
nlohmann::json parse_metadata(const std::vector<std::string>& pairs) {
  nlohmann::json metadata = nlohmann::json::object();
  for (const std::string& pair : pairs) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) fail("--metadata takes KEY=VALUE pairs, got '{}'", pair);
    metadata[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  return metadata;
}

struct ResultFacts {
  std::string model_id;
  double request_rate = 0;
  nlohmann::json metadata;
};

void save_result(const BenchServeFlags& flags, nlohmann::json result, const ResultFacts& facts) {
  const std::string& model_id = facts.model_id;
  const double rate = facts.request_rate;
  const std::string date = now_stamp();
  result["date"] = date;
  result["backend"] = "strata";
  result["endpoint_type"] = bench::is_chat_endpoint(endpoint_of(flags)) ? "openai-chat" : flags.backend;
  result["label"] = flags.label.empty() ? "strata" : flags.label;
  result["model_id"] = model_id;
  result["tokenizer_id"] = flags.tokenizer.empty() ? model_id : flags.tokenizer;
  result["num_prompts"] = flags.dataset.num_prompts;
  result["request_rate"] = std::isinf(rate) ? nlohmann::json("inf") : nlohmann::json(rate);
  result["burstiness"] = flags.burstiness;
  result["max_concurrency"] = flags.max_concurrency ? nlohmann::json(*flags.max_concurrency) : nlohmann::json(nullptr);
  result.update(facts.metadata);
  const std::string base_model = std::filesystem::path(model_id).filename().string();
  const std::string concurrency = flags.max_concurrency ? fmt::format("-concurrency{}", *flags.max_concurrency) : "";
  std::string name = flags.result_filename.empty()
                         ? fmt::format("strata-{}qps{}-{}-{}.json", python_float(rate), concurrency, base_model, date)
                         : flags.result_filename;
  if (!flags.result_dir.empty()) {
    std::filesystem::create_directories(flags.result_dir);
    name = (std::filesystem::path(flags.result_dir) / name).string();
  }
  std::ofstream out(name);
  if (!(out << result.dump(2) << "\n")) fail("cannot write the result to {}; check --result-dir", name);
  fmt::print("Saved the result to {}\n", name);
}

void run_bench_serve(const BenchServeFlags& flags) {
  const std::string base_url = flags.base_url.empty() ? fmt::format("http://{}:{}", flags.host, flags.port) : flags.base_url;
  const double rate = parse_request_rate(flags.request_rate);
  const bench::ServeReportOptions report{.max_concurrency = flags.max_concurrency,
                                         .request_rate = rate,
                                         .percentile_metrics = bench::parse_percentile_metrics(flags.percentile_metrics),
                                         .detailed = flags.save_detailed};
  const std::vector<double> percentiles = bench::parse_metric_percentiles(flags.metric_percentiles);
  const nlohmann::json metadata = parse_metadata(flags.metadata);
  const bench::GoodputSlo goodput = bench::parse_goodput(flags.goodput);
  const std::optional<bench::ServedModelCard> card = bench::first_served_model(base_url);
  if (!card && flags.model.empty())
    fail("cannot list the models at {}/v1/models: start the server, check --base-url/--host/--port, or pass --model",
         base_url);
  const std::string model_id = flags.model.empty() ? card->id : flags.model;
  const PromptTokens tokens = find_tokenizer(flags, card ? card->root : "");
  if (!tokens.tokenizer && bench::is_chat_endpoint(endpoint_of(flags)))
    fail("--endpoint {} sends text, and there is no tokenizer to make it: pass --tokenizer, or use /v1/completions",
         endpoint_of(flags));
  const std::vector<bench::BenchRequest> requests = sample_dataset(flags.dataset, tokens.tokenizer.get(), tokens.vocab_size);
  const bench::ServeEndpoint endpoint{.base_url = base_url,
                                      .endpoint = endpoint_of(flags),
                                      .model = flags.served_model_name.empty() ? model_id : flags.served_model_name,
                                      .ignore_eos = flags.ignore_eos,
                                      .temperature = flags.temperature};
  fmt::print("Starting initial single prompt test run...\n");
  bench::ClientPool clients(base_url);
  std::unique_ptr<bench::ServeClient> probe_client = clients.take();
  const bench::RequestOutput probe = probe_client->send(endpoint, requests.front(), std::chrono::steady_clock::now());
  clients.give_back(std::move(probe_client));
  if (!probe.success)
    fail("Initial test run failed - Please make sure benchmark arguments are correctly specified. Error: {}", probe.error);
  fmt::print("Initial test run completed. Starting main benchmark run...\n");
  fmt::print("Traffic request rate: {}\n", python_float(rate));
  fmt::print("Burstiness factor: {}{}\n", python_float(flags.burstiness), flags.burstiness == 1.0 ? " (Poisson process)" : " (Gamma distribution)");
  fmt::print("Maximum request concurrency: {}\n", flags.max_concurrency ? std::to_string(*flags.max_concurrency) : "None");
  std::fflush(stdout);
  const std::vector<double> arrivals = bench::arrival_offsets_s(
      {.num_requests = std::ssize(requests), .request_rate = rate, .burstiness = flags.burstiness, .seed = flags.dataset.seed});
  const auto total = std::ssize(requests);
  const auto progress = [&flags, total](int64_t done) {  // a line per tenth, where vLLM draws a bar
    if (!flags.disable_tqdm && (done * 10 / total != (done - 1) * 10 / total || done == total))
      fmt::print(stderr, "bench serve: {}/{} requests done\n", done, total);
  };
  const bench::ServeRun run = bench::run_requests(
      endpoint, requests, {.arrival_offsets_s = arrivals, .max_concurrency = flags.max_concurrency, .on_done = progress},
      clients);
  const bench::ServeMetrics metrics = bench::calculate_metrics(
      run.outputs, run.duration_s, {.percentiles = percentiles, .tokenizer = tokens.tokenizer.get(), .goodput = goodput});
  fmt::print("{}", bench::format_serve_result(metrics, run.duration_s, report));
  std::fflush(stdout);
  if (flags.save_result || flags.save_detailed)
    save_result(flags, bench::serve_result_json(metrics, run.outputs, run.duration_s, report),
                {.model_id = model_id, .request_rate = rate, .metadata = metadata});
}

void add_bench_serve_flags(CLI::App& cmd, BenchServeFlags& f) {
  cmd.add_option("--base-url", f.base_url, "the server, e.g. http://127.0.0.1:8000 (default: from --host and --port)");
  cmd.add_option("--host", f.host, "the server's host when --base-url is not given");
  cmd.add_option("--port", f.port, "the server's port when --base-url is not given")->check(CLI::Range(1, 65535));
  cmd.add_option("--backend", f.backend, "vllm or openai (/v1/completions), openai-chat (/v1/chat/completions)")
      ->check(CLI::IsMember({"vllm", "openai", "openai-chat"}));
  cmd.add_option("--endpoint", f.endpoint, "the API route: /v1/completions or /v1/chat/completions (default: the backend's)");
  cmd.add_option("--model", f.model, "the model id to send (default: the first one /v1/models lists)");
  cmd.add_option("--served-model-name", f.served_model_name, "the model id requests carry, when it differs from --model");
  cmd.add_option("--tokenizer", f.tokenizer,
                 "tokenizer.json, a model folder or .gguf (default: --model, else the served model's files)");
  add_dataset_flags(cmd, f.dataset);
  cmd.add_option("--request-rate", f.request_rate, "requests per second, sent as a Poisson process; inf: all at once");
  cmd.add_option("--burstiness", f.burstiness, "gamma shape of the gaps between requests: 1 Poisson, < 1 burstier")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--max-concurrency", f.max_concurrency, "requests in flight at most (default: no cap)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--temperature", f.temperature, "sampling temperature of every request (default 0: greedy)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_flag("--ignore-eos", f.ignore_eos, "ask the server to ignore eos, so every answer has its full length");
  cmd.add_option("--percentile-metrics", f.percentile_metrics, "metrics to report percentiles of: ttft,tpot,itl,e2el");
  cmd.add_option("--metric-percentiles", f.metric_percentiles, "the percentiles to report, e.g. 25,50,99");
  cmd.add_option("--goodput", f.goodput,
                 "service-level objectives (ms) for goodput, e.g. ttft:500 tpot:50 e2el:5000: requests/s meeting all");
  cmd.add_flag("--save-result", f.save_result, "write the result JSON (vLLM's keys)");
  cmd.add_flag("--save-detailed", f.save_detailed, "also save per-request lengths, TTFTs, ITLs, texts and errors");
  cmd.add_option("--result-dir", f.result_dir, "folder of the result file (default: the current one)");
  cmd.add_option("--result-filename", f.result_filename,
                 "result file name (default: strata-{rate}qps[-concurrency{n}]-{model}-{date}.json)");
  cmd.add_option("--label", f.label, "the result's label (default: strata)");
  cmd.add_option("--metadata", f.metadata, "KEY=VALUE pairs saved in the result JSON (the run's setup, say)");
  cmd.add_flag("--disable-tqdm", f.disable_tqdm, "no progress lines on stderr (vLLM's flag for its progress bar)");
}

}  // namespace

void add_bench_serve_command(CLI::App& bench) {
  auto flags = std::make_shared<BenchServeFlags>();
  CLI::App* cmd = bench.add_subcommand("serve", "benchmark a running OpenAI-compatible server (vllm bench serve)");
  add_bench_serve_flags(*cmd, *flags);
  cmd->callback([flags] { run_bench_serve(*flags); });
}

}  // namespace strata::cli
