// Tool-call arguments streamed as the model writes them, on every route of the chat path,
// against a scripted engine whose call is cut inside a string and after an escape: chat
// completions send an id/name delta then argument pieces, Anthropic input_json_delta events,
// Responses function_call_arguments.delta events; each adds up to the whole answer's arguments.
#include <gtest/gtest.h>

#include "server/scripted_server_support.h"

namespace strata::server {
namespace {

using test::Event;
using test::ScriptedServer;

const std::vector<std::string> kCall = {"Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
                                        "ris \\", "\"x\\\"\", \"days\": 2", "}}\n</tool_call>"};
constexpr const char* kWholeArguments = R"({"city":"Paris \"x\"","days":2})";

std::string body(const std::string& extra) {
  return R"({"messages": [{"role": "user", "content": "Weather in Paris?"}],
             "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}])" +
         extra + "}";
}

TEST(ToolCallStreaming, ChatCompletionsSendArgumentPiecesAsWritten) {
  ScriptedServer server({});
  server.service().set_script(kCall);
  const Json whole = Json::parse(server.post("/v1/chat/completions", body("")).body)["choices"][0];
  EXPECT_EQ(whole["message"]["tool_calls"][0]["function"]["arguments"], kWholeArguments);
  std::vector<std::string> pieces;
  std::string content, finish;
  for (const Event& e : server.stream("/v1/chat/completions", body(R"(, "stream": true)"))) {
    if (e.data["choices"].empty()) continue;
    const Json& choice = e.data["choices"][0];
    content += choice["delta"].value("content", "");
    if (choice["finish_reason"].is_string()) finish = choice["finish_reason"];
    if (!choice["delta"].contains("tool_calls")) continue;
    Json call = choice["delta"]["tool_calls"][0];
    ASSERT_EQ(call["index"], 0);
    if (call.contains("id")) {
      EXPECT_EQ(call["id"].get<std::string>().substr(0, 5), "call_");
      call.erase("id");
      EXPECT_EQ(call.dump(), R"({"index":0,"type":"function","function":{"name":"get_weather","arguments":""}})");
    } else {
      pieces.push_back(call["function"]["arguments"]);
    }
  }
  EXPECT_EQ(content, "Checking.");
  EXPECT_EQ(finish, "tool_calls");
  EXPECT_EQ(pieces, (std::vector<std::string>{R"({"city":"Pa)", R"(ris \)", R"("x\"","days":2)", "}"}));
}

TEST(ToolCallStreaming, AnthropicInputJsonDeltasAsWritten) {
  ScriptedServer server({});
  server.service().set_script(kCall);
  std::vector<std::string> shape, pieces;
  for (const Event& e : server.stream("/v1/messages", R"({"max_tokens": 100, "stream": true,
      "messages": [{"role": "user", "content": "Weather?"}],
      "tools": [{"name": "get_weather", "input_schema": {"type": "object"}}]})")) {
    shape.push_back(e.name);
    if (e.name == "content_block_start") shape.back() += ":" + e.data["content_block"]["type"].get<std::string>();
    if (e.name == "content_block_delta" && e.data["delta"]["type"] == "input_json_delta") {
      EXPECT_EQ(e.data["index"], 1);
      pieces.push_back(e.data["delta"]["partial_json"]);
    }
  }
  EXPECT_EQ(shape, (std::vector<std::string>{"message_start", "content_block_start:text", "content_block_delta",
                                             "content_block_stop", "content_block_start:tool_use", "content_block_delta",
                                             "content_block_delta", "content_block_delta", "content_block_delta",
                                             "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(pieces, (std::vector<std::string>{R"({"city":"Pa)", R"(ris \)", R"("x\"","days":2)", "}"}));
}

TEST(ToolCallStreaming, ResponsesArgumentDeltasAsWritten) {
  ScriptedServer server({});
  server.service().set_script(kCall);
  std::vector<std::string> pieces, shape;
  Json done;
  for (const Event& e : server.stream("/v1/responses", R"({"input": "Weather?", "stream": true,
      "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]})")) {
    if (e.name.starts_with("response.function_call") || e.name.starts_with("response.output_item"))
      shape.push_back(e.name);
    if (e.name == "response.function_call_arguments.delta") {
      EXPECT_EQ(e.data["output_index"], 1);
      pieces.push_back(e.data["delta"]);
    }
    if (e.name == "response.completed") done = e.data["response"]["output"][1];
  }
  EXPECT_EQ(shape, (std::vector<std::string>{"response.output_item.added", "response.output_item.done",
                                             "response.output_item.added", "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.delta",
                                             "response.function_call_arguments.done", "response.output_item.done"}));
  EXPECT_EQ(pieces, (std::vector<std::string>{R"({"city":"Pa)", R"(ris \)", R"("x\"","days":2)", "}"}));
  EXPECT_EQ(done["type"], "function_call");
  EXPECT_EQ(done["arguments"], kWholeArguments);
  EXPECT_EQ(done["status"], "completed");
}

}  // namespace
}  // namespace strata::server
