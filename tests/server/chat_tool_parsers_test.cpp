// The served model's tool-call parser on every route of the chat path, against a scripted
// engine: Llama 3 JSON calls become chat tool_calls (streamed as an id/name delta, then the
// arguments), Anthropic tool_use blocks and Responses function_call items; a forced Mistral
// call is read after the [TOOL_CALLS] that ended the prompt, a forced gpt-oss call after the
// header that ended it; forcing a choice the decoder cannot write (gpt-oss among several tools)
// is a 400 naming the parser on each route.
#include <gtest/gtest.h>

#include "server/scripted_server_support.h"
#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

using test::Event;
using test::Reply;
using test::ScriptedServer;

const std::vector<std::string> kLlamaCall = {"Checking. ", "{\"name\": \"get_", "weather\", \"parameters\": ",
                                             "{\"city\": \"Paris\"}}"};
constexpr const char* kChatTools =
    R"("tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])";

std::string chat_body(const std::string& extra = "") {
  return std::string(R"({"messages": [{"role": "user", "content": "Weather in Paris?"}], )") + kChatTools + extra + "}";
}

TEST(ChatToolParsers, Llama3JsonCallsOnTheChatRoute) {
  ScriptedServer server({}, &llama3_json_tool_parser());
  server.service().set_script(kLlamaCall);
  const Reply reply = server.post("/v1/chat/completions", chat_body());
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json choice = Json::parse(reply.body)["choices"][0];
  EXPECT_EQ(choice["message"]["content"], "Checking.");
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"].dump(),
            R"({"name":"get_weather","arguments":"{\"city\":\"Paris\"}"})");
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  std::vector<Json> deltas;
  for (const Event& e : server.stream("/v1/chat/completions", chat_body(R"(, "stream": true)")))
    if (e.data["choices"].size() == 1 && e.data["choices"][0]["delta"].contains("tool_calls"))
      deltas.push_back(e.data["choices"][0]["delta"]["tool_calls"][0]);
  ASSERT_EQ(deltas.size(), 2u);
  EXPECT_TRUE(deltas[0]["id"].get<std::string>().starts_with("call_"));
  deltas[0].erase("id");
  EXPECT_EQ(deltas[0].dump(), R"({"index":0,"type":"function","function":{"name":"get_weather","arguments":""}})");
  EXPECT_EQ(deltas[1].dump(), R"({"index":0,"function":{"arguments":"{\"city\":\"Paris\"}"}})");
}

TEST(ChatToolParsers, Llama3JsonCallsOnAnthropicAndResponses) {
  ScriptedServer server({}, &llama3_json_tool_parser());
  server.service().set_script(kLlamaCall);
  const Reply message = server.post(
      "/v1/messages", R"({"max_tokens": 100, "messages": [{"role": "user", "content": "Weather in Paris?"}],
                         "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]})");
  ASSERT_EQ(message.status, 200) << message.body;
  Json m = Json::parse(message.body);
  ASSERT_EQ(m["content"].size(), 2u);
  m["content"][1].erase("id");
  EXPECT_EQ(m["content"].dump(), R"([{"type":"text","text":"Checking."},)"
                                 R"({"type":"tool_use","name":"get_weather","input":{"city":"Paris"}}])");
  const Reply response = server.post(
      "/v1/responses", R"({"input": "Weather in Paris?",
                          "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]})");
  ASSERT_EQ(response.status, 200) << response.body;
  const Json output = Json::parse(response.body)["output"];
  ASSERT_EQ(output.size(), 2u);
  EXPECT_EQ(output[1]["type"], "function_call");
  EXPECT_EQ(output[1]["name"], "get_weather");
  EXPECT_EQ(output[1]["arguments"], R"({"city":"Paris"})");
}

TEST(ChatToolParsers, ForcedMistralCallIsReadAfterThePromptsMarker) {
  ScriptedServer server({}, &mistral_tool_parser());
  server.service().set_script({"[{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}]"});
  const Reply reply = server.post("/v1/chat/completions", chat_body(R"(, "tool_choice": "required")"));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json message = Json::parse(reply.body)["choices"][0]["message"];
  EXPECT_TRUE(message["content"].is_null());
  ASSERT_EQ(message["tool_calls"].size(), 1u);
  EXPECT_EQ(message["tool_calls"][0]["id"].get<std::string>().size(), 9u);
  EXPECT_EQ(message["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
}

TEST(ChatToolParsers, ForcedHarmonyCallIsReadAfterThePromptsHeader) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kHarmony}, &harmony_tool_parser());
  server.service().set_script({"{\"city\": ", "\"Paris\"}"});
  const Reply reply = server.post(
      "/v1/chat/completions", chat_body(R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})"));
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json choice = Json::parse(reply.body)["choices"][0];
  EXPECT_TRUE(choice["message"]["content"].is_null());
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"].dump(),
            R"({"name":"get_weather","arguments":"{\"city\":\"Paris\"}"})");
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
}

TEST(ChatToolParsers, ForcingAChoiceTheDecoderCannotWriteIs400OnEveryRoute) {
  ScriptedServer server({}, &harmony_tool_parser());
  const std::string two_tools = R"({"messages": [{"role": "user", "content": "Hi"}], "tool_choice": "required",
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
                {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}}]})";
  const Reply chat = server.post("/v1/chat/completions", two_tools);
  EXPECT_EQ(chat.status, 400);
  const Json error = Json::parse(chat.body)["error"];
  EXPECT_EQ(error["param"], "tool_choice");
  EXPECT_NE(error["message"].get<std::string>().find("--tool-call-parser openai"), std::string::npos) << chat.body;
  const Reply message = server.post(
      "/v1/messages", R"({"max_tokens": 10, "messages": [{"role": "user", "content": "Hi"}], "tool_choice": {"type": "any"},
                         "tools": [{"name": "get_weather", "input_schema": {"type": "object"}},
                                   {"name": "now", "input_schema": {"type": "object"}}]})");
  EXPECT_EQ(message.status, 400) << message.body;
  EXPECT_EQ(Json::parse(message.body)["type"], "error");
  const Reply response = server.post(
      "/v1/responses", R"({"input": "Hi", "tool_choice": "required",
                          "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
                                    {"type": "function", "name": "now", "parameters": {"type": "object"}}]})");
  EXPECT_EQ(response.status, 400) << response.body;
  const Reply automatic = server.post("/v1/chat/completions", chat_body(R"(, "max_tokens": 2)"));
  EXPECT_EQ(automatic.status, 200) << automatic.body;
}

}  // namespace
}  // namespace strata::server
