// What every tool-call parser test checks besides the exact calls: the text streamed in two
// pieces split at every byte, and byte by byte, gives the content and calls of the whole
// text parsed at once, and each call's deltas (id and name first, then argument pieces, then
// the close) add up to that call exactly.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

// The calls as "name arguments" lines, for exact comparisons.
std::vector<std::string> call_lines(const std::vector<ToolCall>& calls);

// The deltas of `pieces` streamed (finish included), one line each: "0 name" for a call's
// first, "0 +text" for a piece of its arguments, "0 ." for its close.
std::vector<std::string> delta_lines(const ToolParser& parser, const std::vector<std::string_view>& pieces,
                                     const nlohmann::ordered_json& tools = nullptr);

// ADD_FAILUREs where a split streams differently from the whole parse; returns the whole parse.
ParsedOutput expect_streams_like_whole(const ToolParser& parser, std::string_view text,
                                       const nlohmann::ordered_json& tools = nullptr);

}  // namespace strata::server
