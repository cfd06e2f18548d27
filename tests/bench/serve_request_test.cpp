#include "strata/bench/serve_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::bench {
namespace {

TEST(ServeRequest, BodiesAreVllmBenchmarkBodies) {
  const BenchRequest text{.prompt = "Hello", .prompt_ids = {1, 2}, .prompt_len = 2, .expected_output_len = 9};
  const auto completion = nlohmann::json::parse(
      request_body({.endpoint = "/v1/completions", .model = "m", .ignore_eos = true}, text));
  EXPECT_EQ(completion["prompt"], "Hello");
  EXPECT_EQ(completion["max_tokens"], 9);
  EXPECT_EQ(completion["model"], "m");
  EXPECT_EQ(completion["stream"], true);
  EXPECT_EQ(completion["stream_options"]["include_usage"], true);
  EXPECT_EQ(completion["temperature"], 0.0);
  EXPECT_EQ(completion["ignore_eos"], true);
  const auto chat = nlohmann::json::parse(request_body({.endpoint = "/v1/chat/completions", .model = "m"}, text));
  EXPECT_EQ(chat["messages"][0]["content"], "Hello");
  EXPECT_EQ(chat["max_completion_tokens"], 9);
  EXPECT_FALSE(chat.contains("ignore_eos"));
  const BenchRequest ids{.prompt_ids = {5, 6}, .prompt_len = 2, .expected_output_len = 1};
  EXPECT_EQ(nlohmann::json::parse(request_body({.endpoint = "/v1/completions"}, ids))["prompt"],
            nlohmann::json({5, 6}));
}

// Strata's chat stream: a role-only chunk, content chunks, a finish chunk, then usage.
TEST(ServeRequest, OnlyChunksWithTextCountAsTokenArrivals) {
  RequestOutput out;
  double last = -1;
  observe_chunk(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})", 0.05, out, last);
  observe_chunk(R"({"choices":[{"delta":{"content":"Hel"}}]})", 0.25, out, last);
  observe_chunk(R"({"choices":[{"delta":{"content":"lo"}}]})", 0.35, out, last);
  observe_chunk(R"({"choices":[{"delta":{"reasoning_content":"hm"}}]})", 0.5, out, last);
  observe_chunk(R"({"choices":[{"delta":{},"finish_reason":"length"}]})", 0.51, out, last);
  observe_chunk(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})", 0.52, out, last);
  observe_chunk("[DONE]", 0.53, out, last);
  EXPECT_DOUBLE_EQ(out.ttft_s, 0.25);
  ASSERT_EQ(out.itl_s.size(), 2u);
  EXPECT_NEAR(out.itl_s[0], 0.10, 1e-12);
  EXPECT_NEAR(out.itl_s[1], 0.15, 1e-12);
  EXPECT_EQ(out.generated_text, "Hellohm");
  EXPECT_EQ(out.output_tokens, 4);
}

TEST(ServeRequest, CompletionChunksAndGarbageAreRead) {
  RequestOutput out;
  double last = -1;
  observe_chunk("not json", 0.1, out, last);
  observe_chunk(R"({"choices":[7],"usage":{"completion_tokens":null}})", 0.15, out, last);
  observe_chunk(R"({"choices":[{"text":"a"}],"usage":null})", 0.2, out, last);
  EXPECT_DOUBLE_EQ(out.ttft_s, 0.2);
  EXPECT_EQ(out.generated_text, "a");
  EXPECT_EQ(out.output_tokens, 0);
  EXPECT_TRUE(is_chat_endpoint("/v1/chat/completions"));
  EXPECT_FALSE(is_chat_endpoint("/v1/completions"));
}

}  // namespace
}  // namespace strata::bench
