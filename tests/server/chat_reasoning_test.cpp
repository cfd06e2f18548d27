// /v1/chat/completions with --reasoning-parser against a scripted engine and the real Qwen3
// tokenizer (its template): the thinking and the answer of a reply whose tags are cut over
// tokens, whole and streamed; tool calls read from the answer and from the thinking (a model
// may call before it closes its thinking), streamed as id/name then arguments deltas;
// include_reasoning false;
// enable_thinking false (the prompt closes the thinking); and no parser, no change.
#include <httplib.h>

#include <gtest/gtest.h>

#include <thread>

#include "server/scripted_service_support.h"
#include "strata/server/http_server.h"
#include "strata/server/json_fields.h"
#include "text/tokenizer_fixtures.h"

namespace strata::server {
namespace {

// A tool call inside the thinking is still a call, as is the one in the answer.
const std::vector<std::string> kReply = {
    "<th", "ink>", "I could call <tool", "_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>", " or", "</",
    "think", ">\n\nChecking.", "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"};
constexpr std::string_view kThinking =
    R"(I could call <tool_call>{"name": "get_weather", "arguments": {}}</tool_call> or)";
constexpr std::string_view kThinkingWithoutCall = "I could call  or";
constexpr const char* kTools =
    R"("tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])";

class ChatReasoningTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = {.service = &service_, .tokenizer = &::strata::test::fixture_tokenizer("qwen3"), .served_name = "m",
              .accepted_names = {"m"}, .vocab_size = 151936};
    service_.set_script(kReply);
    start(ReasoningFormat::kQwen3);
  }
  void start(ReasoningFormat format) {
    server_ = std::make_unique<HttpServer>(model_, ServerOptions{.port = 0, .num_http_threads = 4,
                                                                 .reasoning_parser = format});
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->serve(); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  std::string post(const std::string& extra) {
    httplib::Client client("127.0.0.1", port_);
    auto res = client.Post("/v1/chat/completions",
                           R"({"messages": [{"role": "user", "content": "Weather in Paris?"}], )" + extra + "}",
                           "application/json");
    EXPECT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    return res->body;
  }
  Json message(const std::string& extra) { return Json::parse(post(extra))["choices"][0]["message"]; }

  // The joined reasoning_content and content deltas, the tool calls and the finish reason.
  struct Streamed {
    std::string reasoning, content;
    Json tool_calls = Json::array(), finish_reason;
  };
  Streamed stream(const std::string& extra) {
    Streamed s;
    const std::string body = post(extra + R"(, "stream": true)");
    for (size_t pos = 0; (pos = body.find("data: {", pos)) != std::string::npos; ++pos) {
      const Json choice = Json::parse(body.substr(pos + 6, body.find("\n\n", pos) - pos - 6))["choices"][0];
      const Json& delta = choice["delta"];
      EXPECT_EQ(delta.value("reasoning", Json()), delta.value("reasoning_content", Json()));
      s.reasoning += delta.value("reasoning_content", "");
      s.content += delta.value("content", "");
      for (const Json& call : delta.value("tool_calls", Json::array())) {  // merged by index, as clients do
        const size_t index = call["index"].get<size_t>();
        if (call.contains("id")) {
          EXPECT_EQ(index, s.tool_calls.size());
          s.tool_calls.push_back({{"id", call["id"]}, {"name", call["function"]["name"]}, {"arguments", ""}});
        }
        s.tool_calls.at(index)["arguments"] = s.tool_calls.at(index)["arguments"].get<std::string>() +
                                               call["function"]["arguments"].get<std::string>();
      }
      if (!choice["finish_reason"].is_null()) s.finish_reason = choice["finish_reason"];
    }
    return s;
  }

  test::ScriptedService service_;
  ServedModel model_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(ChatReasoningTest, ThinkingApartFromTheAnswerAndToolCallsFromBoth) {
  const Json m = message(kTools);
  EXPECT_EQ(m["reasoning_content"], kThinkingWithoutCall);
  EXPECT_EQ(m["reasoning"], kThinkingWithoutCall);
  EXPECT_EQ(m["content"], "Checking.");  // trimmed around the calls, as without reasoning
  ASSERT_EQ(m["tool_calls"].size(), 2u);
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], "{}");
  EXPECT_EQ(m["tool_calls"][1]["function"]["arguments"], R"({"city":"Paris"})");
  const Streamed s = stream(kTools);
  EXPECT_EQ(s.reasoning, kThinkingWithoutCall);
  EXPECT_EQ(s.content, "\n\nChecking.");
  ASSERT_EQ(s.tool_calls.size(), 2u);
  EXPECT_EQ(s.tool_calls[0]["name"], "get_weather");
  EXPECT_EQ(s.tool_calls[0]["arguments"], "{}");
  EXPECT_EQ(s.tool_calls[1]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(s.tool_calls[1]["id"].get<std::string>().substr(0, 5), "call_");
  EXPECT_EQ(s.finish_reason, "tool_calls");
}

TEST_F(ChatReasoningTest, WithoutToolsTheBlocksAreText) {
  const Json m = message(R"("max_tokens": 100)");
  EXPECT_EQ(m["reasoning_content"], kThinking);
  EXPECT_EQ(m["content"], std::string("\n\nChecking.") + kReply.back());
  EXPECT_FALSE(m.contains("tool_calls"));
}

TEST_F(ChatReasoningTest, IncludeReasoningFalse) {
  const Json m = message(std::string(kTools) + R"(, "include_reasoning": false)");
  EXPECT_TRUE(m["reasoning_content"].is_null());
  EXPECT_EQ(m["content"], "Checking.");
  const Streamed s = stream(std::string(kTools) + R"(, "include_reasoning": false)");
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, "\n\nChecking.");
}

TEST_F(ChatReasoningTest, ThinkingClosedByTheTemplate) {
  service_.set_script({"<think>", "not thinking", "</think>", "4"});
  const Json m = message(R"("chat_template_kwargs": {"enable_thinking": false})");
  EXPECT_TRUE(m["reasoning_content"].is_null());
  EXPECT_EQ(m["content"], "<think>not thinking</think>4");
  EXPECT_EQ(message("\"n\": 1")["reasoning_content"], "not thinking");
}

TEST_F(ChatReasoningTest, NoParserNoChange) {
  TearDown();
  start(ReasoningFormat::kNone);
  std::string whole;
  for (const std::string& text : kReply) whole += text;
  const Json m = message(R"("max_tokens": 100)");
  EXPECT_EQ(m.dump(), Json({{"role", "assistant"}, {"content", whole}}).dump());
  const Streamed s = stream(R"("max_tokens": 100)");
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, whole);
}

}  // namespace
}  // namespace strata::server
