// Streaming side of tool-call parsing: text arrives in pieces; content is given out as soon
// as no start marker can begin in it, and each call as deltas while it is written: its id and
// name once the name is whole, then each settled piece of its arguments (never text that could
// still turn out not to be theirs), the pieces adding up to the arguments of the whole parse.
// The same scan as the whole-text parse runs on the held text, so any split of the output
// gives the same content and calls (a tail that could still grow into a marker is held back).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

// One step of a call as it streams: the first carries the id and name (arguments empty), the
// later ones the next piece of the arguments; the last has `closes` (the call is whole, or its
// text turned out not to be a call after all: then the whole parse has no such call).
struct ToolCallDelta {
  int32_t call = 0;             // the call's number among the stream's calls, from 0
  std::string id;               // first delta only
  std::string name;             // first delta only
  std::string arguments;        // the next piece of the arguments' text
  bool closes = false;
  size_t content_before = 0;    // bytes of the step's content that come before this delta
};

struct ToolStreamStep {
  std::string content;
  std::vector<ToolCall> calls;         // the calls made whole in this step (ids as their deltas gave)
  std::vector<ToolCallDelta> deltas;   // in order
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
  struct OpenCall {
    int32_t call = 0;
    std::string id;
    std::string name;
    std::string arguments;  // sent so far
  };

  ToolStreamStep scan(bool at_end);
  void settle_open(ScannedText& scanned, ToolStreamStep& step);
  void stream_open(ToolStreamStep& step);
  void open_call(ToolStreamStep& step, std::string id, std::string name, std::string arguments);

  const ToolParser* parser_;
  nlohmann::ordered_json tools_;
  std::string pending_;          // not yet settled: from a start marker (or a possible one) on
  std::vector<OpenCall> open_;   // calls of the block at the start of pending_ whose deltas began
  int32_t num_calls_ = 0;
};

}  // namespace strata::server
