// llama3_json (Llama 3.1 / 3.2 / 3.3 JSON tool calling): {"name": ..., "parameters": {...}},
// maybe after <|python_tag|>, several separated by ";". A JSON object only counts as a call
// with a string name and a parameters (or arguments) key, so JSON in prose stays content.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/tool_parsers/call_arguments.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMarkers[] = {kPythonTag, "{\"name\"", "{ \"name\""};

class Llama3JsonParser final : public ToolParser {
 public:
  std::string_view name() const override { return "llama3_json"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }
  bool needs_special_tokens() const override { return true; }

  // One call: [<|python_tag|>] object [";"], with the blanks after it.
  CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json&) const override {
    const size_t begin = skip_blank(text, text.starts_with(kPythonTag) ? kPythonTag.size() : 0);
    if (begin == text.size()) return need_more_or_not(text, at_end);
    if (text[begin] != '{') return {.kind = CallMatch::Kind::kNotCalls, .length = begin};
    const size_t length = json_value_length(text.substr(begin));
    if (length == std::string_view::npos) return need_more_or_not(text, at_end);
    const size_t object_end = begin + length;
    std::optional<ToolCall> call = call_from_object_text(*this, text.substr(begin, length), /*require_arguments=*/true);
    if (!call) return {.kind = CallMatch::Kind::kNotCalls, .length = object_end};
    // Whether a ";" follows is known only at the next non-blank byte.
    size_t end = skip_blank(text, object_end);
    if (end == text.size() && !at_end) return {.kind = CallMatch::Kind::kNeedMore};
    if (end < text.size() && text[end] == ';') end = skip_blank(text, end + 1);
    return {.kind = CallMatch::Kind::kCalls, .length = end, .calls = {std::move(*call)}};
  }

  std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json&) const override {
    const size_t begin = skip_blank(text, text.starts_with(kPythonTag) ? kPythonTag.size() : 0);
    if (begin == text.size() || text[begin] != '{') return {};
    std::optional<PartialCall> call = partial_call_object(text.substr(begin));
    if (!call) return {};
    return {std::move(*call)};
  }

  std::optional<ForcedShape> forced_shape() const override {
    return ForcedShape{.literals = {.call_begin = "{\"name\": \"",
                                    .name_end = "\", \"parameters\": ",
                                    .call_end = "}",
                                    .separator = "; "}};
  }
};

}  // namespace

const ToolParser& llama3_json_tool_parser() {
  static const Llama3JsonParser parser;
  return parser;
}

}  // namespace strata::server
