// The tool-call parsers, one per model family (one file each); tool_parser_registry picks
// among them by name or by the chat template.
#pragma once

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

const ToolParser& hermes_tool_parser();
const ToolParser& llama3_json_tool_parser();
const ToolParser& mistral_tool_parser();
const ToolParser& qwen3_coder_tool_parser();
const ToolParser& deepseek_v3_tool_parser();
const ToolParser& harmony_tool_parser();

}  // namespace strata::server
