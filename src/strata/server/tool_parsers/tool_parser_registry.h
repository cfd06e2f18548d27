// The tool-call parsers by vLLM's --tool-call-parser names, and the one a chat template
// implies when the flag is absent (the markers the template writes), hermes otherwise.
#pragma once

#include <string>
#include <string_view>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

inline constexpr std::string_view kToolParserNames = "hermes, llama3_json, mistral, qwen3_coder, deepseek_v3, openai";

// Null for a name that is none of kToolParserNames (or the aliases deepseek_v31, gpt-oss,
// harmony).
const ToolParser* find_tool_parser(std::string_view name);

struct ToolParserChoice {
  const ToolParser* parser = nullptr;
  std::string reason;  // for the startup log: which marker chose it
};

ToolParserChoice tool_parser_for_template(std::string_view chat_template);

// The default where nothing chose one (hermes).
const ToolParser& default_tool_parser();

}  // namespace strata::server
