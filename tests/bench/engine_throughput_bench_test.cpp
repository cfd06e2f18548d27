// Smoke test of bench/engine_throughput_bench on the CPU: a tiny fixture model, a few
// requests, and the JSON line it appends must describe exactly the workload asked for.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include <fmt/format.h>

#include "test_support.h"

namespace strata {
namespace {

#ifdef STRATA_ENGINE_THROUGHPUT_BENCH
// Runs the bench with `args` on a fixture; returns the one line it appended.
nlohmann::json run_bench(const std::string& fixture, const std::string& args, const std::string& name) {
  const std::string json = test::temp_dir() + "/" + name + ".jsonl";
  std::filesystem::remove(json);
  const std::string command =
      fmt::format("{} --model {} --device cpu --load-format dummy --threads 2 {} --json {} > /dev/null",
                  STRATA_ENGINE_THROUGHPUT_BENCH, test::fixture_path(fixture), args, json);
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(json);
  std::string line;
  EXPECT_TRUE(std::getline(in, line)) << "no line in " << json;
  std::string extra;
  EXPECT_FALSE(std::getline(in, extra)) << "one run appends one line";
  return line.empty() ? nlohmann::json::object() : nlohmann::json::parse(line);
}
#endif

TEST(EngineThroughputBench, CpuRunReportsTheExactWorkload) {
#ifndef STRATA_ENGINE_THROUGHPUT_BENCH
  GTEST_SKIP() << "built without benchmarks (STRATA_BENCH off)";
#else
  const nlohmann::json r = run_bench("hf/llama", "--requests 4 --prompt-tokens 32 --output-tokens 8 "
                                     "--warmup-output-tokens 2 --max-num-batched-tokens 48", "engine_throughput_smoke");
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.at("bench"), "engine_throughput");
  EXPECT_EQ(r.at("device"), "cpu");
  EXPECT_EQ(r.at("requests"), 4);
  EXPECT_EQ(r.at("total_prompt_tokens"), 4 * 32);
  EXPECT_EQ(r.at("total_output_tokens"), 4 * 8);
  EXPECT_EQ(r.at("max_num_batched_tokens"), 48);
  EXPECT_GT(r.at("wall_s").get<double>(), 0.0);
  EXPECT_GT(r.at("output_tok_s").get<double>(), 0.0);
  // 48-token budget: the 32-token prompts prefill over several steps, so every first token
  // comes after the submit and no later than the end.
  EXPECT_GT(r.at("ttft_ms_p50").get<double>(), 0.0);
  // wall_s is printed to the microsecond and ttft to 10 µs, hence the 0.01 ms slack.
  EXPECT_LE(r.at("ttft_ms_p99").get<double>(), r.at("wall_s").get<double>() * 1e3 + 0.01);
  EXPECT_EQ(r.at("preemptions"), 0);
  EXPECT_EQ(r.at("async_scheduling"), false);  // the CPU default
#endif
}

// --async-scheduling reaches the engine: the same workload, every token accounted for.
TEST(EngineThroughputBench, AsyncSchedulingFlagRunsTheWholeWorkload) {
#ifndef STRATA_ENGINE_THROUGHPUT_BENCH
  GTEST_SKIP() << "built without benchmarks (STRATA_BENCH off)";
#else
  const nlohmann::json r = run_bench("hf/qwen3_next", "--requests 6 --prompt-tokens 20 --output-tokens 9 "
                                     "--warmup-output-tokens 0 --async-scheduling", "engine_throughput_async");
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.at("async_scheduling"), true);
  EXPECT_EQ(r.at("total_output_tokens"), 6 * 9);
#endif
}

}  // namespace
}  // namespace strata
