// The parsers by vLLM's names (and aliases), and the one a chat template implies by the
// markers it writes: Qwen3's real template hermes, DeepSeek-V3's deepseek_v3, a template
// with <parameter= (Qwen3-Coder) qwen3_coder before hermes, none of them hermes.
#include <gtest/gtest.h>

#include "strata/server/tool_parsers/tool_parser_registry.h"
#include "text/tokenizer_fixtures.h"

namespace strata::server {
namespace {

TEST(ToolParserRegistry, VllmNames) {
  for (std::string_view name : {"hermes", "llama3_json", "mistral", "qwen3_coder", "deepseek_v3", "openai"}) {
    const ToolParser* parser = find_tool_parser(name);
    ASSERT_NE(parser, nullptr) << name;
    EXPECT_EQ(parser->name(), name);
  }
  EXPECT_EQ(find_tool_parser("gpt-oss")->name(), "openai");
  EXPECT_EQ(find_tool_parser("deepseek_v31")->name(), "deepseek_v3");
  EXPECT_EQ(find_tool_parser("pythonic"), nullptr);
  EXPECT_EQ(find_tool_parser(""), nullptr);
}

TEST(ToolParserRegistry, ChosenFromTheTemplate) {
  EXPECT_EQ(tool_parser_for_template(test::fixture_tokenizer("qwen3").chat_template()).parser->name(), "hermes");
  EXPECT_EQ(tool_parser_for_template(test::fixture_tokenizer("deepseek_v3").chat_template()).parser->name(),
            "deepseek_v3");
  const ToolParserChoice coder =
      tool_parser_for_template("<tool_call>\n<function={{ name }}>\n<parameter={{ p }}>\n</parameter>");
  EXPECT_EQ(coder.parser->name(), "qwen3_coder");
  EXPECT_EQ(coder.reason, "the chat template writes <parameter=");
  EXPECT_EQ(tool_parser_for_template("{{ '[TOOL_CALLS]' }}").parser->name(), "mistral");
  EXPECT_EQ(tool_parser_for_template("<|start|>{{ '<|channel|>' }}").parser->name(), "openai");
  EXPECT_EQ(tool_parser_for_template("{{- '<|python_tag|>' }}").parser->name(), "llama3_json");
  const ToolParserChoice plain = tool_parser_for_template("{{ messages }}");
  EXPECT_EQ(plain.parser->name(), "hermes");
  EXPECT_EQ(plain.reason, "the chat template names no known tool-call format");
}

}  // namespace
}  // namespace strata::server
