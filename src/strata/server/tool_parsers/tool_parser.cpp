#include "strata/server/tool_parsers/tool_parser.h"

#include "strata/core/error.h"
#include "strata/server/random_id.h"
#include "strata/server/stream_tags.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {

std::string ToolParser::make_call_id() const { return "call_" + random_alnum(24); }

ScannedText scan_tool_calls(const ToolParser& parser, std::string_view text, bool at_end,
                            const nlohmann::ordered_json& tools) {
  ScannedText out;
  const std::span<const std::string_view> markers = parser.start_markers();
  size_t pos = 0;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    const TagMatch marker = find_first_tag(rest, markers);
    if (marker.pos == std::string_view::npos) {
      const size_t keep = at_end ? 0 : partial_tag_length(rest, markers);
      out.content.append(rest.substr(0, rest.size() - keep));
      pos += rest.size() - keep;
      break;
    }
    out.content.append(rest.substr(0, marker.pos));
    pos += marker.pos;
    CallMatch m = parser.match(text.substr(pos), at_end, tools);
    if (m.kind == CallMatch::Kind::kNeedMore) {
      STRATA_CHECK(!at_end);
      break;
    }
    STRATA_CHECK(m.length > 0 && m.length <= text.size() - pos);
    if (m.kind == CallMatch::Kind::kNotCalls) {
      out.content.append(text.substr(pos, m.length));
    } else {
      out.content.append(m.content);
      if (pos == 0) out.num_calls_at_start = static_cast<int32_t>(m.calls.size());
      for (ToolCall& call : m.calls) {
        out.content_before.push_back(out.content.size());
        out.calls.push_back(std::move(call));
      }
    }
    pos += m.length;
  }
  out.num_consumed = pos;
  return out;
}

ParsedOutput parse_tool_calls(const ToolParser& parser, std::string_view text, const nlohmann::ordered_json& tools) {
  ScannedText scanned = scan_tool_calls(parser, text, /*at_end=*/true, tools);
  ParsedOutput out{.tool_calls = std::move(scanned.calls)};
  out.content = out.tool_calls.empty() ? std::move(scanned.content) : std::string(trim_blank(scanned.content));
  return out;
}

}  // namespace strata::server
