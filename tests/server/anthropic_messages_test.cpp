// /v1/messages against a scripted engine and the real Qwen3 tokenizer: a reply with thinking,
// text and a tool call as content blocks, whole and as Anthropic's event stream; thinking
// switched by the `thinking` field; the Anthropic conversation rendered exactly as its chat
// equivalent (count_tokens against /tokenize); errors in Anthropic's shape; x-api-key.
#include <gtest/gtest.h>

#include "server/scripted_server_support.h"
#include "strata/server/api_key.h"

namespace strata::server {
namespace {

using test::Event;
using test::Reply;
using test::ScriptedServer;
const std::vector<std::string>& kReply = test::kThinkingTextAndCall;

constexpr const char* kConversation =
    R"("messages": [{"role": "user", "content": "Weather in Paris?"}],
       "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}])";

std::string with(const std::string& extra) {
  return std::string(R"({"max_tokens": 100, )") + kConversation + extra + "}";
}

// Event names, a run of deltas of one block as one "delta", block starts with their type.
std::vector<std::string> shape(const std::vector<Event>& events) {
  std::vector<std::string> out;
  for (const Event& e : events) {
    EXPECT_EQ(e.name, e.data["type"]);
    std::string s = e.name;
    if (e.name == "content_block_start") s += ":" + e.data["content_block"]["type"].get<std::string>();
    if (e.name == "content_block_delta") s = "delta:" + e.data["delta"]["type"].get<std::string>();
    if (out.empty() || out.back() != s || !s.starts_with("delta")) out.push_back(s);
  }
  return out;
}

TEST(AnthropicMessagesTest, ThinkingTextAndToolUseBlocks) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kQwen3});
  server.service().set_script(kReply);
  const Reply reply = server.post("/v1/messages", with(""));
  ASSERT_EQ(reply.status, 200) << reply.body;
  Json m = Json::parse(reply.body);
  EXPECT_TRUE(m["id"].get<std::string>().starts_with("msg_"));
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_TRUE(m["content"][2]["id"].get<std::string>().starts_with("toolu_"));
  m["content"][2].erase("id");
  EXPECT_EQ(m["content"].dump(),
            R"([{"type":"thinking","thinking":"Let me look.","signature":""},{"type":"text","text":"Checking."},)"
            R"({"type":"tool_use","name":"get_weather","input":{"city":"Paris"}}])");
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  const Json count = Json::parse(server.post("/v1/messages/count_tokens", "{" + std::string(kConversation) + "}").body);
  const int64_t prompt = count["input_tokens"];
  EXPECT_GT(prompt, 10);
  EXPECT_EQ(m["usage"].dump(), Json({{"input_tokens", prompt}, {"cache_creation_input_tokens", 0},
                                     {"cache_read_input_tokens", 0}, {"output_tokens", 6}}).dump());
}

TEST(AnthropicMessagesTest, EventStream) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kQwen3});
  server.service().set_script(kReply);
  const std::vector<Event> events = server.stream("/v1/messages", with(R"(, "stream": true)"));
  EXPECT_EQ(shape(events), (std::vector<std::string>{
                               "message_start", "content_block_start:thinking", "delta:thinking_delta",
                               "content_block_stop", "content_block_start:text", "delta:text_delta", "content_block_stop",
                               "content_block_start:tool_use", "delta:input_json_delta", "content_block_stop",
                               "message_delta", "message_stop"}));
  std::string thinking, text;
  for (const Event& e : events) {
    if (e.name != "content_block_delta") continue;
    EXPECT_EQ(e.data["index"], e.data["delta"]["type"] == "thinking_delta" ? 0 : e.data["delta"]["type"] == "text_delta" ? 1 : 2);
    thinking += e.data["delta"].value("thinking", "");
    text += e.data["delta"].value("text", "");
  }
  EXPECT_EQ(thinking, "Let me look.");
  EXPECT_EQ(text, "\n\nChecking.");
  EXPECT_EQ(events[0].data["message"]["content"], Json::array());
  EXPECT_EQ(events[events.size() - 4].data["delta"]["partial_json"], R"({"city":"Paris"})");
  EXPECT_EQ(events[events.size() - 5].data["content_block"]["input"], Json::object());
  EXPECT_EQ(events[events.size() - 2].data["delta"].dump(), R"({"stop_reason":"tool_use","stop_sequence":null})");
  EXPECT_EQ(events[events.size() - 2].data["usage"]["output_tokens"], 6);
}

TEST(AnthropicMessagesTest, ThinkingFieldSwitchesTheTemplate) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kQwen3});
  server.service().set_script({"<think>", "not thinking", "</think>", "4"});
  const auto content = [&](const std::string& thinking) {
    return Json::parse(server.post("/v1/messages", with(R"(, "thinking": )" + thinking)).body)["content"].dump();
  };
  EXPECT_EQ(content(R"({"type": "disabled"})"), R"([{"type":"text","text":"<think>not thinking</think>4"}])");
  EXPECT_EQ(content(R"({"type": "enabled", "budget_tokens": 1024})"),
            R"([{"type":"thinking","thinking":"not thinking","signature":""},{"type":"text","text":"4"}])");
  ScriptedServer plain({});
  plain.service().set_script({"<think>", "not thinking", "</think>", "4"});
  EXPECT_EQ(Json::parse(plain.post("/v1/messages", with(R"(, "thinking": {"type": "enabled", "budget_tokens": 9})")).body)
                ["content"].dump(),
            R"([{"type":"text","text":"<think>not thinking</think>4"}])");
}

TEST(AnthropicMessagesTest, ConversationRendersAsItsChatEquivalent) {
  ScriptedServer server({});
  const Reply anthropic = server.post("/v1/messages/count_tokens", R"({
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "tools": [{"name": "get_weather", "description": "d", "input_schema": {"type": "object"}}],
    "messages": [{"role": "user", "content": "Weather?"},
                 {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                   {"type": "text", "text": "Checking."},
                   {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                   "content": [{"type": "text", "text": "Sunny"}]}, {"type": "text", "text": "Thanks"}]}]})");
  const Reply chat = server.post("/tokenize", R"({
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": {"type": "object"}}}],
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
                 {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "toolu_1", "type": "function",
                   "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                 {"role": "tool", "tool_call_id": "toolu_1", "content": "Sunny"}, {"role": "user", "content": "Thanks"}]})");
  ASSERT_EQ(anthropic.status, 200) << anthropic.body;
  ASSERT_EQ(chat.status, 200) << chat.body;
  EXPECT_EQ(Json::parse(anthropic.body)["input_tokens"], Json::parse(chat.body)["count"]);
  EXPECT_GT(Json::parse(chat.body)["count"].get<int>(), 40);
}

TEST(AnthropicMessagesTest, ErrorsInAnthropicsShape) {
  ScriptedServer server({});
  const Reply missing = server.post("/v1/messages", R"({"messages": [{"role": "user", "content": "hi"}]})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(missing.body, R"({"type":"error","error":{"type":"invalid_request_error","message":"'max_tokens' is )"
                          R"(required: the most tokens to generate, e.g. 1024"}})");
  const Reply image = server.post("/v1/messages", with(R"(, "messages": [{"role": "user", "content": [{"type": "image",
      "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}])"));
  EXPECT_EQ(image.status, 400);
  EXPECT_EQ(Json::parse(image.body)["error"]["message"],
            "the model 'm' takes text only; send the messages without images");
  const Reply prefill = server.post("/v1/messages", R"({"max_tokens": 5, "messages": [{"role": "user", "content": "hi"},
      {"role": "assistant", "content": "The answer is"}]})");
  EXPECT_EQ(prefill.status, 400);
  EXPECT_EQ(Json::parse(prefill.body)["error"]["message"],
            "a final assistant message (a prefill for the answer to continue) is not supported; end 'messages' with "
            "a user message");
  const Reply unknown = server.post("/v1/messages", with(R"(, "n": 2)"));
  EXPECT_EQ(unknown.status, 400);
  EXPECT_EQ(Json::parse(unknown.body)["error"]["message"],
            "\"n\" is not a field of /v1/messages requests; remove it (or start the server with "
            "--ignore-unknown-fields to ignore fields it does not know)");
  const Reply model = server.post("/v1/messages", with(R"(, "model": "claude")"));
  EXPECT_EQ(model.status, 404);
  EXPECT_EQ(Json::parse(model.body)["error"]["type"], "not_found_error");
}

TEST(AnthropicMessagesTest, XApiKey) {
  EXPECT_TRUE(authorized("", "k", "k"));
  EXPECT_TRUE(authorized("Bearer k", "", "k"));
  EXPECT_TRUE(authorized("Bearer k", "wrong", "k"));
  EXPECT_FALSE(authorized("", "", "k"));
  EXPECT_FALSE(authorized("k", "wrong", "k"));
  ScriptedServer server({.api_key = "k"});
  const Reply refused = server.post("/v1/messages", with(""), {{"x-api-key", "nope"}});
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(Json::parse(refused.body)["error"]["type"], "authentication_error");
  EXPECT_EQ(server.post("/v1/messages", with(""), {{"x-api-key", "k"}, {"anthropic-version", "2023-06-01"}}).status, 200);
  EXPECT_EQ(server.post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})",
                        {{"x-api-key", "k"}})
                .status,
            200);
}

}  // namespace
}  // namespace strata::server
