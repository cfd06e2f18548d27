// render_conversation's options on the Qwen3 tokenizer fixture: a given template renders instead
// of the tokenizer's, and continue_final_message cuts the prompt right after the last message's
// text as transformers' apply_chat_template does (keeping its trailing space only where the
// template kept it); --chat-template's value is a file or the template's text.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/text/chat_prompt.h"
#include "text/tokenizer_fixtures.h"

namespace strata::test {
namespace {

const char* kTemplate = "{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>{% endfor %}"
                        "{% if add_generation_prompt %}<assistant>{% endif %}";

ChatRenderRequest conversation(const std::string& last_reply, bool add_generation_prompt) {
  ChatRenderRequest request{.add_generation_prompt = add_generation_prompt};
  request.messages = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "Hi"}},
                                                    {{"role", "assistant"}, {"content", last_reply}}});
  return request;
}

TEST(ChatPrompt, AGivenTemplateRendersInsteadOfTheTokenizers) {
  const text::Tokenizer& tokenizer = fixture_tokenizer("qwen3");
  EXPECT_EQ(text::render_conversation(tokenizer, conversation("Hello", true), {.chat_template = kTemplate}),
            "<user>Hi</user><assistant>Hello</assistant><assistant>");
  EXPECT_EQ(text::encode_conversation(tokenizer, conversation("Hello", false), {.chat_template = kTemplate}),
            tokenizer.encode("<user>Hi</user><assistant>Hello</assistant>", /*add_special_tokens=*/false));
}

TEST(ChatPrompt, ContinueFinalMessageCutsAfterItsText) {
  const text::Tokenizer& tokenizer = fixture_tokenizer("qwen3");
  const text::ChatPromptOptions options{.chat_template = kTemplate, .continue_final_message = true};
  EXPECT_EQ(text::render_conversation(tokenizer, conversation("The answer is", false), options),
            "<user>Hi</user><assistant>The answer is");
  EXPECT_EQ(text::render_conversation(tokenizer, conversation("  The answer is ", false), options),
            "<user>Hi</user><assistant>  The answer is ");  // kept by the template: kept
  const text::ChatPromptOptions trimming{.chat_template = "{% for m in messages %}[{{ m.content | trim }}]{% endfor %}",
                                         .continue_final_message = true};
  EXPECT_EQ(text::render_conversation(tokenizer, conversation("The answer is ", false), trimming), "[Hi][The answer is");
  const std::string own = text::render_conversation(tokenizer, conversation("The answer is", false),
                                                    {.continue_final_message = true});
  EXPECT_TRUE(own.ends_with("The answer is")) << own;
  EXPECT_NE(own.find("<|im_start|>assistant\n"), std::string::npos) << own;
}

TEST(ChatPrompt, ContinueFinalMessageRefusals) {
  const text::Tokenizer& tokenizer = fixture_tokenizer("qwen3");
  const text::ChatPromptOptions options{.chat_template = kTemplate, .continue_final_message = true};
  EXPECT_THROW(text::render_conversation(tokenizer, conversation("x", true), options), Error);
  EXPECT_THROW(text::render_conversation(tokenizer, conversation("x", false),
                                         {.chat_template = "<nothing>", .continue_final_message = true}),
               Error);
  ChatRenderRequest no_text = conversation("x", false);
  no_text.messages.back()["content"] = nlohmann::ordered_json::array({{{"type", "image"}}});
  EXPECT_THROW(text::render_conversation(tokenizer, no_text, options), Error);
}

TEST(ChatPrompt, LoadChatTemplateTakesAFileOrTheText) {
  const std::string path = temp_dir() + "/" + per_test_name("template.jinja");
  write_file_atomically(path, kTemplate);
  EXPECT_EQ(text::load_chat_template(path), kTemplate);
  EXPECT_EQ(text::load_chat_template("{{ messages[0].content }}"), "{{ messages[0].content }}");
  EXPECT_THROW(text::load_chat_template(temp_dir() + "/no_such_template.jinja"), Error);
  EXPECT_THROW(text::load_chat_template(temp_dir()), Error);  // a folder
}

}  // namespace
}  // namespace strata::test
