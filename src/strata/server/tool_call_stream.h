// Streaming side of tool-call parsing: text arrives in pieces; content is given out as soon
// as no start marker can begin in it, each call as soon as it is whole. The same scan as the
// whole-text parse runs on the held text, so any split of the output gives the same content
// and calls (a tail that could still grow into a marker is held back).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

struct ToolStreamStep {
  std::string content;
  std::vector<ToolCall> calls;
};

class ToolCallStream {
 public:
  // `tools`: the request's tools (null when none).
  ToolCallStream(const ToolParser& parser, nlohmann::ordered_json tools)
      : parser_(&parser), tools_(std::move(tools)) {}

  // What can be given out now.
  ToolStreamStep push(std::string_view delta);
  // At the end: the held text, a call cut short read as it is or kept as content.
  ToolStreamStep finish();

 private:
  ToolStreamStep scan(bool at_end);

  const ToolParser* parser_;
  nlohmann::ordered_json tools_;
  std::string pending_;  // not yet settled: from a start marker (or a possible one) on
};

}  // namespace strata::server
