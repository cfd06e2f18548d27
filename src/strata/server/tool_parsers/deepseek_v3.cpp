// deepseek_v3 (DeepSeek-V3, R1-0528): one group of calls,
//   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
// DeepSeek-V3.1's NAME<｜tool▁sep｜>{...} calls are read too. The markers are added tokens
// that are not special, so the constrained decoder can write them: calls are forced in the
// V3 form, one per line.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/tool_parsers/call_arguments.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kMarkers[] = {kCallsBegin};

constexpr std::string_view kFence = "```";
constexpr std::string_view kJsonFence = "```json";

// A call's name and the text from its arguments on; nullopt until the name is whole. V3
// writes function<｜tool▁sep｜>NAME, then the arguments in a ```json fence; V3.1 NAME<｜tool▁sep｜>.
struct CallHead {
  std::string_view name;
  std::string_view rest;
};
std::optional<CallHead> read_head(std::string_view call) {
  const size_t sep = call.find(kSep);
  if (sep == std::string_view::npos) return std::nullopt;
  const std::string_view head = trim_blank(call.substr(0, sep));
  CallHead out{.name = head, .rest = call.substr(sep + kSep.size())};
  if (head == "function") {
    const size_t newline = out.rest.find('\n');
    if (newline == std::string_view::npos) return std::nullopt;
    out.name = trim_blank(out.rest.substr(0, newline));
    out.rest = trim_blank(out.rest.substr(newline + 1));
    if (out.rest.starts_with(kJsonFence)) out.rest.remove_prefix(kJsonFence.size());
    else if (out.rest.starts_with(kFence)) out.rest.remove_prefix(kFence.size());
  }
  if (out.name.empty() || out.name.find_first_of(" \n<{") != std::string_view::npos) return std::nullopt;
  out.rest = trim_blank(out.rest);
  return out;
}

// One call's text between <｜tool▁call▁begin｜> and <｜tool▁call▁end｜>.
std::optional<ToolCall> read_call(const ToolParser& parser, std::string_view call) {
  std::optional<CallHead> head = read_head(call);
  if (!head) return std::nullopt;
  if (head->rest.ends_with(kFence)) head->rest.remove_suffix(kFence.size());
  const std::optional<nlohmann::ordered_json> args = parse_model_json(head->rest);
  if (!args || !args->is_object()) return std::nullopt;
  return ToolCall{.id = parser.make_call_id(), .name = std::string(head->name), .arguments = compact_json(head->rest)};
}

// A call still being written: once its name is whole and its arguments have begun (a fence
// still growing into ```json is no '{' yet).
std::optional<PartialCall> read_partial_call(std::string_view call) {
  const std::optional<CallHead> head = read_head(call);
  if (!head || head->rest.empty() || head->rest.front() != '{') return std::nullopt;
  return PartialCall{.name = std::string(head->name), .arguments = arguments_prefix(head->rest).text};
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

  // Each whole call of the group, then the one being written.
  std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json&) const override {
    std::vector<PartialCall> calls;
    for (std::string_view body = trim_blank(text.substr(kCallsBegin.size())); body.starts_with(kCallBegin);
         body = trim_blank(body)) {
      const size_t end = body.find(kCallEnd);
      const std::string_view call =
          body.substr(kCallBegin.size(), end == std::string_view::npos ? end : end - kCallBegin.size());
      if (end == std::string_view::npos) {
        if (std::optional<PartialCall> partial = read_partial_call(call)) calls.push_back(std::move(*partial));
        break;
      }
      const std::optional<ToolCall> whole = read_call(*this, call);
      if (!whole) break;
      calls.push_back({.name = whole->name, .arguments = whole->arguments});
      body.remove_prefix(end + kCallEnd.size());
    }
    return calls;
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
