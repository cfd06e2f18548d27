// The fields each generation route takes: implemented ones pass (their readers check values),
// output-neutral hints pass with sensible values, known but unimplemented fields (OpenAI's
// and vLLM's) are 400s naming them, unknown ones too unless ignored (then logged once).
#include <gtest/gtest.h>

#include "strata/server/api_error.h"
#include "strata/server/request_field_policy.h"

namespace strata::server {
namespace {

std::string refused_param(const RequestFieldPolicy& policy, const char* body, ApiRoute route) {
  try {
    policy.check(Json::parse(body), route);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    return e.param;
  }
  return "ok";
}

constexpr ApiRoute kChat = ApiRoute::kChatCompletions, kCompletions = ApiRoute::kCompletions;

TEST(RequestFieldPolicy, ImplementedFieldsAndHintsPass) {
  const RequestFieldPolicy policy(false);
  EXPECT_EQ(refused_param(policy, R"({"model": "m", "messages": [], "tools": [], "tool_choice": "auto",
      "parallel_tool_calls": true, "logit_bias": {}, "top_k": 3, "chat_template_kwargs": {}, "user": "u",
      "metadata": {"k": "v"}, "store": false, "service_tier": "auto", "modalities": ["text"],
      "prompt_cache_key": "k", "safety_identifier": "s", "functions": null, "audio": null,
      "reasoning_effort": "low", "include_reasoning": false})", kChat),
            "ok");
  EXPECT_EQ(refused_param(policy, R"({"prompt": "p", "echo": true, "best_of": 1, "suffix": "",
      "return_token_ids": true, "logit_bias": {}, "user": "u"})", kCompletions),
            "ok");
}

TEST(RequestFieldPolicy, KnownButUnimplementedAreNamed) {
  const RequestFieldPolicy policy(/*ignore_unknown_fields=*/true);  // refused all the same
  const std::pair<const char*, const char*> chat[] = {
      {R"({"thinking_token_budget": 9})", "thinking_token_budget"}, {R"({"functions": []})", "functions"},
      {R"({"audio": {}})", "audio"}, {R"({"store": true})", "store"}, {R"({"service_tier": "flex"})", "service_tier"},
      {R"({"modalities": ["text", "audio"]})", "modalities"}, {R"({"prediction": {}})", "prediction"},
      {R"({"web_search_options": {}})", "web_search_options"}, {R"({"verbosity": "low"})", "verbosity"},
      {R"({"echo": true})", "echo"},
      {R"({"min_tokens": 2})", "min_tokens"}, {R"({"guided_whitespace_pattern": " "})", "guided_whitespace_pattern"},
      {R"({"user": 5})", "user"}, {R"({"metadata": "x"})", "metadata"}};
  for (const auto& [body, param] : chat) EXPECT_EQ(refused_param(policy, body, kChat), param) << body;
  EXPECT_EQ(refused_param(policy, R"({"prompt_logprobs": 1})", kCompletions), "ok");  // its reader checks it
  EXPECT_EQ(refused_param(policy, R"({"prompt_logprobs": 1})", kChat), "ok");
  EXPECT_EQ(refused_param(policy, R"({"response_format": {}})", kCompletions), "response_format");
  EXPECT_EQ(refused_param(policy, R"({"messages": []})", kCompletions), "ok");  // unknown there, ignored
  for (const char* route_field : {R"({"structured_outputs": {}})", R"({"guided_json": {}})", R"({"guided_regex": "a"})",
                                  R"({"guided_choice": []})", R"({"guided_grammar": "g"})", R"({"grammar": "g"})",
                                  R"({"guided_decoding_backend": "xgrammar"})"})
    for (const ApiRoute route : {kChat, kCompletions})
      EXPECT_EQ(refused_param(policy, route_field, route), "ok") << route_field;  // structured_outputs reads them
}

TEST(RequestFieldPolicy, MessagesAndResponsesRoutes) {
  const RequestFieldPolicy policy(false);
  constexpr ApiRoute kMessages = ApiRoute::kMessages, kCount = ApiRoute::kCountTokens, kResponses = ApiRoute::kResponses;
  EXPECT_EQ(refused_param(policy, R"({"model": "m", "max_tokens": 5, "messages": [], "system": "s",
      "stop_sequences": [], "top_k": 2, "thinking": {}, "metadata": {"user_id": "u"},
      "cache_control": {"type": "ephemeral"}, "service_tier": "auto", "chat_template_kwargs": {}})", kMessages),
            "ok");
  EXPECT_EQ(refused_param(policy, R"({"messages": [], "system": "s", "tools": [], "thinking": {}})", kCount), "ok");
  EXPECT_EQ(refused_param(policy, R"({"input": "i", "instructions": "s", "max_output_tokens": 5, "store": true,
      "previous_response_id": "r", "text": {}, "reasoning": {}, "truncation": "disabled", "background": false,
      "include": [], "metadata": {}, "service_tier": "default"})", kResponses),
            "ok");
  const std::pair<const char*, ApiRoute> refused[] = {
      {R"({"n": 2})", kMessages}, {R"({"stop": "x"})", kMessages}, {R"({"mcp_servers": []})", kMessages},
      {R"({"container": "c"})", kMessages}, {R"({"max_tokens": 5})", kCount}, {R"({"stream": true})", kCount},
      {R"({"truncation": "auto"})", kResponses}, {R"({"background": true})", kResponses},
      {R"({"include": ["reasoning.encrypted_content"]})", kResponses}, {R"({"conversation": "c"})", kResponses},
      {R"({"messages": []})", kResponses}, {R"({"min_tokens": 2})", kResponses}};
  const char* params[] = {"n", "stop", "mcp_servers", "container", "max_tokens", "stream", "truncation", "background",
                          "include", "conversation", "messages", "min_tokens"};
  for (size_t i = 0; i < std::size(refused); ++i)
    EXPECT_EQ(refused_param(policy, refused[i].first, refused[i].second), params[i]) << refused[i].first;
}

TEST(RequestFieldPolicy, UnknownFieldsAre400UnlessIgnored) {
  const RequestFieldPolicy strict(false), lenient(true);
  EXPECT_EQ(refused_param(strict, R"({"temprature": 0.5})", kChat), "temprature");
  EXPECT_EQ(refused_param(strict, R"({"messages": []})", kCompletions), "messages");
  EXPECT_EQ(refused_param(strict, R"({"prompt": "p"})", kChat), "prompt");
  EXPECT_EQ(refused_param(lenient, R"({"temprature": 0.5, "x": 1})", kChat), "ok");
  const std::string long_name(5000, 'k');
  EXPECT_EQ(refused_param(strict, ("{\"" + long_name + "\": 1}").c_str(), kChat).size(), 64u);
  try {
    strict.check(Json{{long_name, 1}}, kChat);
  } catch (const ApiError& e) {
    EXPECT_LT(std::string(e.what()).size(), 300u);  // a message never grows with the input
  }
}

}  // namespace
}  // namespace strata::server
