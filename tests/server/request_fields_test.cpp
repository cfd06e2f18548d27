#include <gtest/gtest.h>

#include "strata/server/api_error.h"
#include "strata/server/api_key.h"
#include "strata/server/chat_request.h"
#include "strata/server/completion_request.h"
#include "strata/server/generation_fields.h"

namespace strata::server {
namespace {

// The param named by the 400 the body causes, or "ok".
template <typename F>
std::string refused_param(F&& read) {
  try {
    read();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.param;
  }
  return "ok";
}

TEST(GenerationFields, ReadsEveryField) {
  const Json body = Json::parse(R"({"temperature": 0.5, "top_p": 0.9, "top_k": 40, "min_p": 0.1,
      "presence_penalty": 0.5, "frequency_penalty": -0.5, "repetition_penalty": 1.1, "seed": -1,
      "stop": ["a", "", "b"], "n": 3, "max_tokens": 7, "ignore_eos": true, "priority": -2, "user": "u"})");
  const GenerationFields f = read_generation_fields(body, 100);
  EXPECT_FLOAT_EQ(f.request.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(f.request.sampling.top_p, 0.9f);
  EXPECT_EQ(f.request.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(f.request.sampling.min_p, 0.1f);
  EXPECT_FLOAT_EQ(f.request.sampling.repetition_penalty, 1.1f);
  EXPECT_EQ(f.request.sampling.seed, UINT64_MAX);
  EXPECT_EQ(f.request.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(f.request.n, 3);
  EXPECT_EQ(f.request.max_tokens, 7);
  EXPECT_TRUE(f.max_tokens_given);
  EXPECT_TRUE(f.request.ignore_eos);
  EXPECT_EQ(f.request.priority, -2);
  EXPECT_EQ(read_generation_fields(Json::parse(R"({"max_completion_tokens": 3, "max_tokens": 9})"), 10).request.max_tokens, 3);
}

TEST(GenerationFields, RefusesBadValuesNamingTheField) {
  for (const auto& [text, param] : std::vector<std::pair<std::string, std::string>>{
           {R"({"temperature": -0.1})", "temperature"}, {R"({"temperature": true})", "temperature"},
           {R"({"top_p": 0})", "top_p"}, {R"({"top_k": -2})", "top_k"}, {R"({"n": 129})", "n"},
           {R"({"max_tokens": -1})", "max_tokens"},
           {R"({"prompt_logprobs": 21})", "prompt_logprobs"}, {R"({"prompt_logprobs": -1})", "prompt_logprobs"}, {R"({"seed": 1.5})", "seed"}, {R"({"stop": [1]})", "stop"},
           {R"({"stop_token_ids": [10]})", "stop_token_ids"}, {R"({"seed": 18446744073709551615})", "seed"},
           {R"({"temperature": null, "n": 1})", "ok"}})
    EXPECT_EQ(refused_param([&] { read_generation_fields(Json::parse(text), 10); }), param) << text;
}

TEST(GenerationFields, FitToContext) {
  GenerationFields f = read_generation_fields(Json::object(), 100);
  const GenerationRequest r = fit_to_context(f, {1, 2, 3}, {.max_model_len = 10});
  EXPECT_EQ(r.max_tokens, 7);  // the rest of the context
  EXPECT_EQ(fit_to_context(f, {1, 2, 3}, {.max_model_len = 10, .default_max_tokens = 4}).max_tokens, 4);
  EXPECT_EQ(refused_param([&] { fit_to_context(f, std::vector<int32_t>(10, 1), {.max_model_len = 10}); }), "prompt");
  EXPECT_EQ(refused_param([&] { fit_to_context(f, {}, {.max_model_len = 10}); }), "prompt");
  f.max_tokens_given = true;
  f.request.max_tokens = 8;
  EXPECT_EQ(refused_param([&] { fit_to_context(f, {1, 2, 3}, {.max_model_len = 10}); }), "max_tokens");
  f.request.max_tokens = 7;
  EXPECT_EQ(fit_to_context(f, {1, 2, 3}, {.max_model_len = 10}).max_tokens, 7);
}

TEST(ChatRequest, ContentPartsToolsAndToolChoice) {
  const Json body = Json::parse(R"({"messages": [
      {"role": "system", "content": "S"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function",
        "function": {"name": "f", "arguments": "{\"z\": 1, \"a\": 2}"}}]}],
      "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}],
      "logprobs": true, "top_logprobs": 4, "stream": true, "stream_options": {"include_usage": true}})");
  const ChatRequest chat = read_chat_request(body, 100);
  EXPECT_EQ(chat.render.messages[1]["content"], "a\nb");
  EXPECT_EQ(chat.render.messages[2]["content"], "");
  EXPECT_EQ(chat.render.messages[2]["tool_calls"][0]["function"]["arguments"].dump(), R"({"z":1,"a":2})");
  EXPECT_EQ(chat.render.tools[0]["function"]["parameters"].dump(), R"({"type":"object","properties":{}})");
  EXPECT_TRUE(chat.parse_tool_calls && chat.stream && chat.include_usage && chat.logprobs);
  EXPECT_EQ(chat.fields.request.sampling.logprobs, 4);
  EXPECT_FALSE(chat.tool_choice.forces());
  // "none": the tools still reach the template (vLLM's default), but no call is parsed.
  Json none = body;
  none["tool_choice"] = "none";
  EXPECT_EQ(read_chat_request(none, 100).render.tools, chat.render.tools);
  EXPECT_FALSE(read_chat_request(none, 100).parse_tool_calls);
  Json required = body;
  required["tool_choice"] = "required";
  EXPECT_TRUE(read_chat_request(required, 100).tool_choice.forces());  // the format: start_chat, by the parser
  // A JSON response_format beside a forced call: the call is the whole turn, so no text is
  // constrained; structured_outputs beside it is two constraints on one output.
  Json with_format = required;
  with_format["response_format"] = Json::parse(R"({"type": "json_object"})");
  const ChatRequest forced = read_chat_request(with_format, 100);
  EXPECT_TRUE(forced.tool_choice.forces() && !forced.json_object && !forced.json_schema);
  with_format["response_format"] = Json::parse(R"({"type": "json_schema", "json_schema": {"name": "x",
      "schema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}})");
  EXPECT_FALSE(read_chat_request(with_format, 100).json_schema);
  with_format["response_format"] = Json::parse(R"({"type": "json_schema", "json_schema": {"name": "x",
      "schema": {"type": "nope"}}})");
  EXPECT_EQ(refused_param([&] { read_chat_request(with_format, 100); }), "response_format");  // still read
  required["structured_outputs"] = Json::parse(R"({"regex": "a+"})");
  EXPECT_EQ(refused_param([&] { read_chat_request(required, 100); }), "structured_outputs");
}

TEST(ChatRequest, ReasoningEffortAndIncludeReasoning) {
  const Json body = Json::parse(R"({"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "high",
      "chat_template_kwargs": {"enable_thinking": false}, "include_reasoning": false})");
  const ChatRequest chat = read_chat_request(body, 100);
  EXPECT_EQ(chat.render.extra.dump(), R"({"enable_thinking":false,"reasoning_effort":"high"})");
  EXPECT_FALSE(chat.include_reasoning);
  EXPECT_EQ(chat.reasoning, ReasoningFormat::kNone);  // the handler sets it from the server's flag
  EXPECT_EQ(read_conversation(body).extra.dump(), R"({"enable_thinking":false,"reasoning_effort":"high"})");
  // chat_template_kwargs wins, as in vLLM; no effort leaves the variable undefined.
  Json both = body;
  both["chat_template_kwargs"] = Json::parse(R"({"reasoning_effort": "low"})");
  EXPECT_EQ(read_chat_request(both, 100).render.extra.dump(), R"({"reasoning_effort":"low"})");
  Json plain = Json::parse(R"({"messages": [{"role": "user", "content": "hi"}], "reasoning_effort": null})");
  EXPECT_EQ(read_chat_request(plain, 100).render.extra.dump(), "{}");
  EXPECT_TRUE(read_chat_request(plain, 100).include_reasoning);
  for (const char* bad : {R"("extreme")", "1", "true", R"(["low"])", R"("")"}) {
    Json b = plain;
    b["reasoning_effort"] = Json::parse(bad);
    EXPECT_EQ(refused_param([&] { read_chat_request(b, 100); }), "reasoning_effort") << bad;
  }
  plain["include_reasoning"] = "no";
  EXPECT_EQ(refused_param([&] { read_chat_request(plain, 100); }), "include_reasoning");
}

TEST(GenerationFields, LogitBias) {
  const GenerationFields f = read_generation_fields(Json::parse(R"({"logit_bias": {"7": -100, "3": 2.5, "07": 1}})"), 10);
  ASSERT_EQ(f.request.sampling.logit_bias.size(), 2u);  // "07" is token 7 again: the last value counts
  EXPECT_EQ(f.request.sampling.logit_bias[0].token_id, 3);
  EXPECT_FLOAT_EQ(f.request.sampling.logit_bias[0].bias, 2.5f);
  EXPECT_EQ(f.request.sampling.logit_bias[1].token_id, 7);
  EXPECT_FLOAT_EQ(f.request.sampling.logit_bias[1].bias, 1.0f);
  for (const char* bad : {R"({"logit_bias": {"10": 1}})", R"({"logit_bias": {"-1": 1}})", R"({"logit_bias": {"a": 1}})",
                          R"({"logit_bias": {"": 1}})", R"({"logit_bias": {"1": 100.5}})", R"({"logit_bias": {"1": "x"}})",
                          R"({"logit_bias": [1]})", R"({"logit_bias": {" 1": 1}})", R"({"logit_bias": {"1e0": 1}})"})
    EXPECT_EQ(refused_param([&] { read_generation_fields(Json::parse(bad), 10); }), "logit_bias") << bad;
  Json many = Json::object();
  for (int i = 0; i <= static_cast<int>(kMaxLogitBiasTokens); ++i) many[std::to_string(i)] = 1;
  EXPECT_EQ(refused_param([&] { read_generation_fields(Json{{"logit_bias", many}}, 5000); }), "logit_bias");
}

TEST(CompletionRequest, PromptShapes) {
  const auto prompts = [](const char* text) { return read_prompts(Json::parse(text), 50); };
  EXPECT_EQ(prompts(R"("hi")").size(), 1u);
  EXPECT_EQ(std::get<std::vector<int32_t>>(prompts("[1, 2, 3]")[0]), (std::vector<int32_t>{1, 2, 3}));
  const auto many = prompts(R"([[1], [2, 3]])");
  ASSERT_EQ(many.size(), 2u);
  EXPECT_EQ(std::get<std::vector<int32_t>>(many[1]), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(std::get<std::string>(prompts(R"(["a", "b"])")[1]), "b");
  for (const char* bad : {"[]", "[50]", "[[1], 5]", "{}", "3", "[1.5]"})
    EXPECT_EQ(refused_param([&] { prompts(bad); }), "prompt") << bad;
  EXPECT_EQ(refused_param([] { read_completion_request(Json::parse(R"({"prompt": "a", "suffix": "b"})"), 50); }),
            "suffix");
  // prompts x n is bounded: 256 choices at most.
  EXPECT_EQ(refused_param([] { read_completion_request(Json::parse(R"({"prompt": ["a", "b", "c"], "n": 100})"), 50); }),
            "n");
  EXPECT_EQ(refused_param([] { read_completion_request(Json::parse(R"({"prompt": ["a", "b"], "n": 128})"), 50); }),
            "ok");
  // best_of only as n: nothing is ranked.
  EXPECT_EQ(refused_param([] { read_completion_request(Json::parse(R"({"prompt": "a", "n": 2, "best_of": 2})"), 50); }),
            "ok");
  EXPECT_EQ(refused_param([] { read_completion_request(Json::parse(R"({"prompt": "a", "best_of": 3})"), 50); }),
            "best_of");
}

TEST(ApiKey, ConstantTimeCompareAndBearer) {
  EXPECT_TRUE(constant_time_equals("abc", "abc"));
  EXPECT_FALSE(constant_time_equals("abc", "abd"));
  EXPECT_FALSE(constant_time_equals("abc", "abcd"));
  EXPECT_FALSE(constant_time_equals("", "a"));
  EXPECT_TRUE(authorized("Bearer k1", "k1"));
  EXPECT_FALSE(authorized("k1", "k1"));
  EXPECT_FALSE(authorized("Bearer k2", "k1"));
  EXPECT_FALSE(authorized("", "k1"));
  EXPECT_FALSE(authorized("Bearer ", "k1"));
}

}  // namespace
}  // namespace strata::server
