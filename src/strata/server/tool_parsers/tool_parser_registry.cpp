#include "strata/server/tool_parsers/tool_parser_registry.h"

#include <fmt/format.h>

#include "strata/server/tool_parsers/families.h"

namespace strata::server {
namespace {

struct NamedParser {
  std::string_view name;
  const ToolParser& (*parser)();
};

constexpr NamedParser kParsers[] = {
    {"hermes", hermes_tool_parser},           {"llama3_json", llama3_json_tool_parser},
    {"mistral", mistral_tool_parser},         {"qwen3_coder", qwen3_coder_tool_parser},
    {"deepseek_v3", deepseek_v3_tool_parser}, {"deepseek_v31", deepseek_v3_tool_parser},
    {"openai", harmony_tool_parser},          {"gpt-oss", harmony_tool_parser},
    {"harmony", harmony_tool_parser},
};

// A marker only the family's templates write, most specific first (Qwen3-Coder's template
// also writes <tool_call>).
struct TemplateMarker {
  std::string_view marker;
  const ToolParser& (*parser)();
};

constexpr TemplateMarker kTemplateMarkers[] = {
    {"<｜tool▁calls▁begin｜>", deepseek_v3_tool_parser},
    {"<|channel|>", harmony_tool_parser},
    {"[TOOL_CALLS]", mistral_tool_parser},
    {"<parameter=", qwen3_coder_tool_parser},
    {"<tool_call>", hermes_tool_parser},
    {"<|python_tag|>", llama3_json_tool_parser},
    {"\"parameters\": dictionary of argument name and its value", llama3_json_tool_parser},
};

}  // namespace

const ToolParser* find_tool_parser(std::string_view name) {
  for (const NamedParser& p : kParsers)
    if (p.name == name) return &p.parser();
  return nullptr;
}

ToolParserChoice tool_parser_for_template(std::string_view chat_template) {
  for (const TemplateMarker& m : kTemplateMarkers)
    if (chat_template.find(m.marker) != std::string_view::npos)
      return {.parser = &m.parser(), .reason = fmt::format("the chat template writes {}", m.marker)};
  return {.parser = &default_tool_parser(), .reason = "the chat template names no known tool-call format"};
}

const ToolParser& default_tool_parser() { return hermes_tool_parser(); }

}  // namespace strata::server
