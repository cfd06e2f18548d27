// `strata bench serve | latency | throughput`: vLLM's `vllm bench` commands, one file each.
#include <CLI/CLI.hpp>

namespace strata::cli {

void add_bench_serve_command(CLI::App& bench);
void add_bench_latency_command(CLI::App& bench);
void add_bench_throughput_command(CLI::App& bench);

void add_bench_command(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "benchmarks: serve (a running server), latency, throughput (in-process)");
  bench->require_subcommand(1);
  add_bench_serve_command(*bench);
  add_bench_latency_command(*bench);
  add_bench_throughput_command(*bench);
}

}  // namespace strata::cli
