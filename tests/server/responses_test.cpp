// /v1/responses against a scripted engine and the real Qwen3 tokenizer: a reply with thinking,
// text and a tool call as output items, whole and as the numbered event stream; input items
// rendered as their chat equivalent; and previous_response_id continuing a stored conversation.
#include <gtest/gtest.h>

#include "server/scripted_server_support.h"

namespace strata::server {
namespace {

using test::Event;
using test::Reply;
using test::ScriptedServer;
const std::vector<std::string>& kReply = test::kThinkingTextAndCall;

constexpr const char* kTools =
    R"("tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}])";

// The items without their random ids.
Json without_ids(Json items) {
  for (Json& item : items) item.erase("id");
  return items;
}

int64_t token_count(ScriptedServer& server, const std::string& chat_body) {
  const Reply reply = server.post("/tokenize", chat_body);
  EXPECT_EQ(reply.status, 200) << reply.body;
  return Json::parse(reply.body)["count"];
}

TEST(ResponsesTest, ReasoningMessageAndFunctionCallItems) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kQwen3});
  server.service().set_script(kReply);
  const Reply reply = server.post("/v1/responses", std::string(R"({"input": "Weather in Paris?", )") + kTools + "}");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const Json r = Json::parse(reply.body);
  EXPECT_EQ(r["status"], "completed");
  EXPECT_TRUE(r["incomplete_details"].is_null());
  const Json& call = r["output"][2];
  EXPECT_TRUE(call["call_id"].get<std::string>().starts_with("call_"));
  EXPECT_EQ(without_ids(r["output"]).dump(),
            R"([{"type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"Let me look."}],)"
            R"("status":"completed"},{"type":"message","status":"completed","role":"assistant","content":[{"type":)"
            R"("output_text","text":"Checking.","annotations":[],"logprobs":[]}]},{"type":"function_call","call_id":")" +
                call["call_id"].get<std::string>() +
                R"(","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}])");
  EXPECT_EQ(r["usage"]["output_tokens"], 6);
  EXPECT_EQ(r["usage"]["total_tokens"], r["usage"]["input_tokens"].get<int64_t>() + 6);
}

TEST(ResponsesTest, EventStream) {
  ScriptedServer server({.reasoning_parser = ReasoningFormat::kQwen3});
  server.service().set_script(kReply);
  const std::vector<Event> events =
      server.stream("/v1/responses", std::string(R"({"input": "Weather?", "stream": true, )") + kTools + "}");
  std::vector<std::string> names;
  std::string reasoning, text;
  for (size_t i = 0; i < events.size(); ++i) {
    const Event& e = events[i];
    EXPECT_EQ(e.name, e.data["type"]);
    EXPECT_EQ(e.data["sequence_number"], i);
    if (e.name == "response.reasoning_text.delta") reasoning += e.data["delta"].get<std::string>();
    if (e.name == "response.output_text.delta") text += e.data["delta"].get<std::string>();
    if (names.empty() || names.back() != e.name || !e.name.ends_with(".delta")) names.push_back(e.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "response.created", "response.in_progress", "response.output_item.added",
                       "response.reasoning_text.delta", "response.reasoning_text.done", "response.output_item.done",
                       "response.output_item.added", "response.content_part.added", "response.output_text.delta",
                       "response.output_text.done", "response.content_part.done", "response.output_item.done",
                       "response.output_item.added", "response.function_call_arguments.delta",
                       "response.function_call_arguments.done", "response.output_item.done", "response.completed"}));
  EXPECT_EQ(reasoning, "Let me look.");
  EXPECT_EQ(text, "\n\nChecking.");
  const Json& done = events.back().data["response"];
  EXPECT_EQ(done["status"], "completed");
  ASSERT_EQ(done["output"].size(), 3u);
  EXPECT_EQ(done["output"][1]["content"][0]["text"], "\n\nChecking.");
  EXPECT_EQ(done["output"][2]["arguments"], R"({"city":"Paris"})");
  EXPECT_EQ(events[events.size() - 4].data["delta"], R"({"city":"Paris"})");
  EXPECT_EQ(events[0].data["response"]["status"], "in_progress");
}

TEST(ResponsesTest, InputItemsRenderAsTheirChatEquivalent) {
  ScriptedServer server({});
  server.service().set_script({"Sunny."});
  const Reply reply = server.post("/v1/responses", std::string(R"({"instructions": "Be brief.", "input": [
      {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
      {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"},
      {"type": "function_call_output", "call_id": "c1", "output": "Sunny"}], )") + kTools + "}");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(Json::parse(reply.body)["usage"]["input_tokens"], token_count(server, R"({
      "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
      "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
          "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny"}]})"));
}

TEST(ResponsesTest, PreviousResponseIdContinuesWithoutTheInstructions) {
  ScriptedServer server({});
  server.service().set_script({"Hello", " Ada."});
  const std::vector<Event> events =
      server.stream("/v1/responses", R"({"input": "I am Ada.", "instructions": "Be brief.", "stream": true})");
  const std::string id = events.back().data["response"]["id"];
  const Reply second = server.post("/v1/responses", R"({"input": "Who am I?", "previous_response_id": ")" + id + "\"}");
  ASSERT_EQ(second.status, 200) << second.body;
  const Json r = Json::parse(second.body);
  EXPECT_EQ(r["previous_response_id"], id);
  EXPECT_EQ(r["usage"]["input_tokens"], token_count(server, R"({"messages": [{"role": "user", "content": "I am Ada."},
      {"role": "assistant", "content": "Hello Ada."}, {"role": "user", "content": "Who am I?"}]})"));
  const Reply unstored = server.post("/v1/responses", R"({"input": "hi", "store": false})");
  const Reply follow = server.post(
      "/v1/responses", R"({"input": "x", "previous_response_id": ")" + Json::parse(unstored.body)["id"].get<std::string>() + "\"}");
  EXPECT_EQ(follow.status, 400);
  EXPECT_EQ(Json::parse(follow.body)["error"]["code"], "previous_response_not_found");
  EXPECT_EQ(Json::parse(follow.body)["error"]["param"], "previous_response_id");
}

TEST(ResponsesTest, UnsupportedInputsNameWhatIsRefused) {
  ScriptedServer server({});
  const auto message = [&](const std::string& body) {
    const Reply reply = server.post("/v1/responses", body);
    EXPECT_EQ(reply.status, 400) << reply.body;
    return Json::parse(reply.body)["error"]["message"].get<std::string>();
  };
  EXPECT_EQ(message(R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]})"),
            "the model 'm' takes text only; send the messages without images");
  EXPECT_EQ(message(R"({"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "x"}]}]})"),
            "input[0].content[0]: parts of type \"input_file\" are not supported here, so send input_text parts "
            "(input_image parts go in user messages)");
  EXPECT_EQ(message(R"({"input": "hi", "tools": [{"type": "web_search"}]})"),
            "tools[0]: only {\"type\": \"function\", \"name\", \"parameters\"} tools are supported, got type "
            "\"web_search\"");
  EXPECT_EQ(message(R"({"input": "hi", "background": true})"),
            "'background': background responses are not supported; leave 'background' out");
  EXPECT_EQ(message(R"({"input": []})"), "'input' must hold at least one item");
}

}  // namespace
}  // namespace strata::server
