// What every tool-call parser test checks besides the exact calls: the text streamed in two
// pieces split at every byte, and byte by byte, gives the content and calls of the whole
// text parsed at once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

// The calls as "name arguments" lines, for exact comparisons.
std::vector<std::string> call_lines(const std::vector<ToolCall>& calls);

// ADD_FAILUREs where a split streams differently from the whole parse; returns the whole parse.
ParsedOutput expect_streams_like_whole(const ToolParser& parser, std::string_view text,
                                       const nlohmann::ordered_json& tools = nullptr);

}  // namespace strata::server
