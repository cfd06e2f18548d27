#include "strata/server/metrics_text.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata::server {
namespace {

// Three requests' stats: two first tokens at 20 ms, one at 100 s.
EngineStatsSnapshot three_requests() {
  EngineStatsSnapshot s{.num_running = 3, .kv_cache_usage = 0.25, .prompt_tokens_total = 120};
  for (double seconds : {0.02, 0.02, 100.0}) s.time_to_first_token.observe(seconds);
  return s;
}

TEST(MetricsText, GaugesCountersAndCumulativeHistograms) {
  const std::string text = render_metrics(three_requests(), "m\"x");
  EXPECT_NE(text.find("# TYPE strata:num_requests_running gauge\nstrata:num_requests_running{model_name=\"m\\\"x\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:kv_cache_usage_perc{model_name=\"m\\\"x\"} 0.25\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE strata:prompt_tokens_total counter\nstrata:prompt_tokens_total{model_name=\"m\\\"x\"} 120\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"0.01\"} 0\n"
                      "strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"0.02\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"80\"} 2\n"
                      "strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"160\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"2560\"} 3\n"
                      "strata:time_to_first_token_seconds_bucket{model_name=\"m\\\"x\",le=\"+Inf\"} 3\n"
                      "strata:time_to_first_token_seconds_sum{model_name=\"m\\\"x\"} 100.04\n"
                      "strata:time_to_first_token_seconds_count{model_name=\"m\\\"x\"} 3\n"),
            std::string::npos);
  for (const char* name : {"num_requests_waiting", "generation_tokens_total", "num_preemptions_total",
                           "prefix_cache_queries_total", "prefix_cache_hits_total", "inter_token_latency_seconds_count",
                           "e2e_request_latency_seconds_count"})
    EXPECT_NE(text.find(std::string("strata:") + name), std::string::npos) << name;
}

// vLLM's own names, help texts, labels (model_name, engine) and float-style numbers, so a
// gateway or autoscaler reading vLLM reads Strata unchanged.
TEST(MetricsText, TheMetricsGatewaysReadUnderVllmNames) {
  EngineStatsSnapshot s = three_requests();
  s.num_waiting = 2;
  s.generation_tokens_total = 7;
  s.prefix_cache_queries_total = 64;
  s.prefix_cache_hits_total = 48;
  s.e2e_latency.observe(0.4);
  s.inter_token_latency.observe(0.012);
  s.request_time_per_output_token.observe(0.012);
  const std::string text = render_metrics(s, "smol");
  const std::string labels = "{model_name=\"smol\",engine=\"0\"}";
  for (const std::string& expected : std::vector<std::string>{
           "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
           "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running" + labels + " 3.0\n",
           "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting" + labels + " 2.0\n",
           "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc" + labels + " 0.25\n",
           "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total" + labels + " 120.0\n",
           "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total" + labels + " 7.0\n",
           "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total" + labels + " 64.0\n",
           "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total" + labels + " 48.0\n",
           "# TYPE vllm:time_to_first_token_seconds histogram\n"
           "vllm:time_to_first_token_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"0.001\"} 0.0\n",
           "vllm:time_to_first_token_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"0.02\"} 2.0\n",
           "vllm:time_to_first_token_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"2560.0\"} 3.0\n"
           "vllm:time_to_first_token_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"+Inf\"} 3.0\n"
           "vllm:time_to_first_token_seconds_sum" + labels + " 100.04\n"
           "vllm:time_to_first_token_seconds_count" + labels + " 3.0\n",
           "vllm:e2e_request_latency_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"0.3\"} 0.0\n"
           "vllm:e2e_request_latency_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"0.5\"} 1.0\n",
           "vllm:inter_token_latency_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"0.025\"} 1.0\n",
           "vllm:request_time_per_output_token_seconds_bucket{model_name=\"smol\",engine=\"0\",le=\"80.0\"} 1.0\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
}

TEST(MetricsText, HybridPrefixCacheSnapshotsAndCachedTokensPerRequest) {
  EngineStatsSnapshot s;
  s.ssm_snapshots_taken_total = 7;
  s.ssm_snapshots = 3;
  s.ssm_snapshot_bytes = 3 * 65536;
  s.cached_prompt_tokens.observe(0);
  s.cached_prompt_tokens.observe(2048);
  const std::string text = render_metrics(s, "m");
  EXPECT_NE(text.find("# TYPE strata:ssm_snapshots_taken_total counter\nstrata:ssm_snapshots_taken_total{model_name=\"m\"} 7\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:ssm_snapshots{model_name=\"m\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_snapshot_bytes{model_name=\"m\"} 196608\n"), std::string::npos);
  EXPECT_NE(text.find("strata:request_cached_prompt_tokens_bucket{model_name=\"m\",le=\"0\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("strata:request_cached_prompt_tokens_bucket{model_name=\"m\",le=\"1024\"} 1\n"
                      "strata:request_cached_prompt_tokens_bucket{model_name=\"m\",le=\"4096\"} 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:request_cached_prompt_tokens_sum{model_name=\"m\"} 2048\n"), std::string::npos);
}

TEST(MetricsText, SwapCountsAndBytes) {
  EngineStatsSnapshot s;
  s.swapped_out_total = 5;
  s.swapped_in_total = 4;
  s.swap_out_bytes_total = 5 * 4096;
  s.swap_in_bytes_total = 4 * 4096;
  s.swap_space_used_bytes = 4096;
  const std::string text = render_metrics(s, "m");
  EXPECT_NE(text.find("# TYPE strata:num_swapped_out_total counter\nstrata:num_swapped_out_total{model_name=\"m\"} 5\n"),
            std::string::npos);
  EXPECT_NE(text.find("strata:num_swapped_in_total{model_name=\"m\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("strata:swap_out_bytes_total{model_name=\"m\"} 20480\n"), std::string::npos);
  EXPECT_NE(text.find("strata:swap_in_bytes_total{model_name=\"m\"} 16384\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE strata:swap_space_used_bytes gauge\nstrata:swap_space_used_bytes{model_name=\"m\"} 4096\n"),
            std::string::npos);
}

TEST(MetricsText, SsmSnapshotHostTierTraffic) {
  EngineStatsSnapshot s;
  s.ssm_host_snapshots = 2;
  s.ssm_host_snapshot_bytes = 2 * 58368;
  s.ssm_host_stored_total = 6;
  s.ssm_host_restored_total = 3;
  s.ssm_host_stored_bytes_total = 6 * 58368;
  s.ssm_host_restored_bytes_total = 3 * 58368;
  const std::string text = render_metrics(s, "m");
  EXPECT_NE(text.find("strata:ssm_host_snapshots{model_name=\"m\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_host_snapshot_bytes{model_name=\"m\"} 116736\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_host_stored_total{model_name=\"m\"} 6\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_host_restored_total{model_name=\"m\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_host_stored_bytes_total{model_name=\"m\"} 350208\n"), std::string::npos);
  EXPECT_NE(text.find("strata:ssm_host_restored_bytes_total{model_name=\"m\"} 175104\n"), std::string::npos);
}

TEST(MetricsText, SpeculativeDecodingCountersPerPosition) {
  EngineStatsSnapshot s;
  s.spec_num_drafts_total = 4;
  s.spec_draft_tokens_total = 12;
  s.spec_accepted_tokens_total = 5;
  s.spec_accepted_per_pos_total = {3, 2, 0};
  const std::string text = render_metrics(s, "m");
  EXPECT_NE(text.find("strata:spec_decode_num_drafts_total{model_name=\"m\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("strata:spec_decode_num_draft_tokens_total{model_name=\"m\"} 12\n"), std::string::npos);
  EXPECT_NE(text.find("strata:spec_decode_num_accepted_tokens_total{model_name=\"m\"} 5\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE strata:spec_decode_num_accepted_tokens_per_pos_total counter\n"
                      "strata:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"0\"} 3\n"
                      "strata:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"1\"} 2\n"
                      "strata:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",position=\"2\"} 0\n"),
            std::string::npos);
}

// Steps in flight at once is a count per engine: replicas report the largest, not the sum.
TEST(MetricsText, PipelineMicroBatchesInFlight) {
  std::vector<EngineStatsSnapshot> replicas(2);
  replicas[0].max_micro_batches_in_flight = 2;
  replicas[1].max_micro_batches_in_flight = 2;
  EXPECT_NE(render_metrics(replicas[0], "m").find("# TYPE strata:pipeline_max_micro_batches_in_flight gauge\n"
                                                  "strata:pipeline_max_micro_batches_in_flight{model_name=\"m\"} 2\n"),
            std::string::npos);
  EXPECT_NE(render_metrics(replicas, "m").find("strata:pipeline_max_micro_batches_in_flight{model_name=\"m\"} 2\n"),
            std::string::npos);
}

// Data-parallel replicas: strata: names sum them, each vllm: family lists one series per
// replica under engine="i", as vLLM's data-parallel engines do.
TEST(MetricsText, ReplicasSumUnderStrataNamesAndSplitByEngineUnderVllmNames) {
  std::vector<EngineStatsSnapshot> replicas(2);
  replicas[0] = {.num_running = 2, .kv_cache_usage = 0.5, .prompt_tokens_total = 10};
  replicas[1] = {.num_running = 1, .kv_cache_usage = 0.25, .prompt_tokens_total = 7};
  replicas[1].e2e_latency.observe(0.4);
  const std::string text = render_metrics(replicas, "m");
  for (const std::string& expected : std::vector<std::string>{
           "strata:num_requests_running{model_name=\"m\"} 3\n",
           "strata:kv_cache_usage_perc{model_name=\"m\"} 0.375\n",
           "strata:prompt_tokens_total{model_name=\"m\"} 17\n",
           "strata:e2e_request_latency_seconds_count{model_name=\"m\"} 1\n",
           "# TYPE vllm:num_requests_running gauge\n"
           "vllm:num_requests_running{model_name=\"m\",engine=\"0\"} 2.0\n"
           "vllm:num_requests_running{model_name=\"m\",engine=\"1\"} 1.0\n",
           "vllm:prompt_tokens_total{model_name=\"m\",engine=\"0\"} 10.0\n"
           "vllm:prompt_tokens_total{model_name=\"m\",engine=\"1\"} 7.0\n",
           "vllm:e2e_request_latency_seconds_count{model_name=\"m\",engine=\"0\"} 0.0\n"
           "vllm:e2e_request_latency_seconds_bucket{model_name=\"m\",engine=\"1\",le=\"0.3\"} 0.0\n"})
    EXPECT_NE(text.find(expected), std::string::npos) << expected;
  EXPECT_EQ(text.find("# TYPE vllm:num_requests_running", text.find("# TYPE vllm:num_requests_running") + 1),
            std::string::npos);  // one family header for both series
}

}  // namespace
}  // namespace strata::server
