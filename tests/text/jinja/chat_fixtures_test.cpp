// The real chat templates of Qwen3, Llama-3.1 and DeepSeek-V3 reproduce transformers'
// apply_chat_template output byte for byte (expected.json), plus SmolLM2's ChatML template.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/chat_template.h"
#include "test_support.h"

namespace strata {
namespace {

nlohmann::ordered_json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::ordered_json::parse(in);
}

// tokenizer_config.json writes special tokens as a string or an AddedToken object.
std::string token_text(const nlohmann::ordered_json& token) {
  if (token.is_string()) return token.get<std::string>();
  if (token.is_object() && token.contains("content")) return token["content"].get<std::string>();
  return "";
}

nlohmann::ordered_json unpack_tokenizer_config(const std::string& name) {
  const std::string dir = test::unpack_fixture("tokenizers/" + name + ".tar.gz", "tokenizer_" + name);
  return read_json(dir + "/tokenizer_config.json");
}

void check_fixture_chats(const std::string& name, size_t expected_num_chats) {
  const nlohmann::ordered_json config = unpack_tokenizer_config(name);
  const nlohmann::ordered_json expected = read_json(test::fixture_path("tokenizers/expected.json"));
  const nlohmann::ordered_json& chats = expected["tokenizers_refs"][name]["chat"];
  ASSERT_EQ(chats.size(), expected_num_chats);
  const std::string chat_template = config["chat_template"].get<std::string>();
  for (size_t i = 0; i < chats.size(); ++i) {
    const nlohmann::ordered_json& chat = chats[i];
    ChatRenderRequest request;
    request.messages = chat["messages"];
    if (chat.contains("tools")) request.tools = chat["tools"];
    request.add_generation_prompt = chat["add_generation_prompt"].get<bool>();
    request.bos_token = token_text(config.value("bos_token", nlohmann::ordered_json()));
    request.eos_token = token_text(config.value("eos_token", nlohmann::ordered_json()));
    EXPECT_EQ(render_chat(chat_template, request), chat["text"].get<std::string>())
        << name << " chat " << i;
  }
}

TEST(ChatTemplateFixtures, Qwen3) { check_fixture_chats("qwen3", 7); }
TEST(ChatTemplateFixtures, Llama31) { check_fixture_chats("llama3_1", 7); }
TEST(ChatTemplateFixtures, DeepSeekV3) { check_fixture_chats("deepseek_v3", 7); }

TEST(ChatTemplateFixtures, Llama2HasNoTemplate) {
  const nlohmann::ordered_json config = unpack_tokenizer_config("llama2");
  EXPECT_FALSE(config.contains("chat_template") && config["chat_template"].is_string());
}

TEST(ChatTemplateFixtures, Qwen3EnableThinkingFalse) {
  const nlohmann::ordered_json config = unpack_tokenizer_config("qwen3");
  ChatRenderRequest request;
  request.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hi"}])");
  request.add_generation_prompt = true;
  request.extra = {{"enable_thinking", false}};
  EXPECT_EQ(render_chat(config["chat_template"].get<std::string>(), request),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(ChatTemplateFixtures, Qwen3ReasoningContentSplit) {
  const nlohmann::ordered_json config = unpack_tokenizer_config("qwen3");
  ChatRenderRequest request;
  request.messages = nlohmann::ordered_json::parse(R"([
    {"role": "user", "content": "Q1"},
    {"role": "assistant", "content": "<think>\nR1\n</think>\n\nA1"},
    {"role": "user", "content": "Q2"},
    {"role": "assistant", "content": "<think>\nR2\n</think>\n\nA2"}])");
  EXPECT_EQ(render_chat(config["chat_template"].get<std::string>(), request),
            "<|im_start|>user\nQ1<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>user\nQ2<|im_end|>\n"
            "<|im_start|>assistant\n<think>\nR2\n</think>\n\nA2<|im_end|>\n");
}

constexpr const char* kSmolLm2Template =
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

TEST(ChatTemplateSmolLm2, AddsDefaultSystemPrompt) {
  ChatRenderRequest request;
  request.messages = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "Hello!"}])");
  request.add_generation_prompt = true;
  EXPECT_EQ(render_chat(kSmolLm2Template, request),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateSmolLm2, KeepsGivenSystemPrompt) {
  ChatRenderRequest request;
  request.messages = nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
          {"role": "assistant", "content": "Hello."}])");
  EXPECT_EQ(render_chat(kSmolLm2Template, request),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello.<|im_end|>\n");
}

TEST(ChatTemplate, RaiseExceptionCarriesLineAndMessage) {
  ChatRenderRequest request;
  try {
    render_chat("line one\n{{ raise_exception('Roles must alternate') }}", request);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "template line 2, column 4: raise_exception: Roles must alternate");
  }
}

TEST(ChatTemplate, ContextVariables) {
  ChatRenderRequest request;
  request.bos_token = "<s>";
  request.eos_token = "</s>";
  request.extra = {{"custom", 3}};
  EXPECT_EQ(render_chat("{{ bos_token }}|{{ eos_token }}|{{ tools is none }}|{{ custom }}|"
                        "{{ add_generation_prompt }}|{{ strftime_now('%Y') | length }}",
                        request),
            "<s>|</s>|True|3|False|4");
}

}  // namespace
}  // namespace strata
