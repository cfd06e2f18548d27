// deepseek_v3 (DeepSeek-V3, R1-0528): one group of calls,
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// DeepSeek-V3.1's NAME<｜tool▁sep｜>{...} calls are read too. The markers are added tokens
// that are not special, so the constrained decoder can write them: calls are forced in the
// V3 form, one per line.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kMarkers[] = {kCallsBegin};

// One call's text between <｜tool▁call▁begin｜> and <｜tool▁call▁end｜>.
std::optional<ToolCall> read_call(const ToolParser& parser, std::string_view call) {
  const size_t sep = call.find(kSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view head = trim_blank(call.substr(0, sep));
  std::string_view rest = call.substr(sep + kSep.size());
  std::string_view name = head;
  if (head == "function") {  // V3: the name, then the arguments in a ```json fence
    const size_t newline = rest.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    name = trim_blank(rest.substr(0, newline));
    rest = trim_blank(rest.substr(newline + 1));
    if (rest.starts_with("```json")) rest.remove_prefix(7);
    else if (rest.starts_with("```")) rest.remove_prefix(3);
    rest = trim_blank(rest);
    if (rest.ends_with("```")) rest.remove_suffix(3);
  }
  if (name.empty() || name.find_first_of(" \n<{") != std::string_view::npos) return std::nullopt;
  const std::optional<nlohmann::ordered_json> args = parse_model_json(rest);
  if (!args || !args->is_object()) return std::nullopt;
  return ToolCall{.id = parser.make_call_id(), .name = std::string(name), .arguments = args->dump()};
}

// The calls in a group's body; nullopt when anything in it is not a whole call.
std::optional<std::vector<ToolCall>> read_calls(const ToolParser& parser, std::string_view body) {
  std::vector<ToolCall> calls;
  for (body = trim_blank(body); !body.empty(); body = trim_blank(body)) {
    if (!body.starts_with(kCallBegin)) return std::nullopt;
    const size_t end = body.find(kCallEnd);
    if (end == std::string_view::npos) return std::nullopt;
    std::optional<ToolCall> call = read_call(parser, body.substr(kCallBegin.size(), end - kCallBegin.size()));
    if (!call) return std::nullopt;
    calls.push_back(std::move(*call));
    body.remove_prefix(end + kCallEnd.size());
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

class DeepSeekV3Parser final : public ToolParser {
 public:
  std::string_view name() const override { return "deepseek_v3"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }
  // Generation may stop at the last call's end, before <｜tool▁calls▁end｜>.
  CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json&) const override {
    const std::optional<Block> block = closed_block(text, kCallsBegin.size(), kCallsEnd, at_end);
    if (!block) return {.kind = CallMatch::Kind::kNeedMore};
    std::optional<std::vector<ToolCall>> calls = read_calls(*this, block->body);
    if (!calls) return {.kind = CallMatch::Kind::kNotCalls, .length = block->length};
    return {.kind = CallMatch::Kind::kCalls, .length = block->length, .calls = std::move(*calls)};
  }

  std::optional<ForcedShape> forced_shape() const override {
    return ForcedShape{.literals = {.calls_begin = std::string(kCallsBegin),
                                    .call_begin = std::string(kCallBegin) + "function" + std::string(kSep),
                                    .name_end = "\n```json\n",
                                    .call_end = "\n```" + std::string(kCallEnd),
                                    .separator = "\n",
                                    .calls_end = std::string(kCallsEnd)}};
  }
};

}  // namespace

const ToolParser& deepseek_v3_tool_parser() {
  static const DeepSeekV3Parser parser;
  return parser;
}

}  // namespace strata::server
