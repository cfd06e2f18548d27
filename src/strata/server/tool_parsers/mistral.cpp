// mistral: [TOOL_CALLS] then a JSON list [{"name": ..., "arguments": {...}}, ...] (tokenizer
// versions before 11), or name[ARGS]{...} (version 11 on: Mistral Small 3.2, Magistral,
// Devstral), [TOOL_CALLS] again before each further call. Ids are 9 alphanumerics: Mistral's
// chat templates refuse any other tool-call id when the conversation comes back.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/random_id.h"
#include "strata/server/stream_tags.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kToolCalls = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kMarkers[] = {kToolCalls};
constexpr std::string_view kArgsTag[] = {kArgs};
constexpr size_t kMaxNameBytes = 256;

class MistralParser final : public ToolParser {
 public:
  std::string_view name() const override { return "mistral"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }
  bool needs_special_tokens() const override { return true; }
  std::string make_call_id() const override { return random_alnum(9); }

  CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json&) const override {
    const size_t begin = skip_blank(text, kToolCalls.size());
    if (begin == text.size()) return need_more_or_not(text, at_end);
    return text[begin] == '[' ? list_match(text, begin, at_end) : args_match(text, begin, at_end);
  }

  // Forced as the list form: the prompt ends with [TOOL_CALLS], a special token.
  std::optional<ForcedShape> forced_shape() const override {
    return ForcedShape{.literals = {.calls_begin = "[",
                                    .call_begin = "{\"name\": \"",
                                    .name_end = "\", \"arguments\": ",
                                    .call_end = "}",
                                    .separator = ", ",
                                    .calls_end = "]"},
                       .prompt_suffix = std::string(kToolCalls)};
  }

 private:

  CallMatch list_match(std::string_view text, size_t begin, bool at_end) const {
    const size_t length = json_value_length(text.substr(begin));
    if (length == std::string_view::npos) return need_more_or_not(text, at_end);
    const size_t end = begin + length;
    const std::optional<nlohmann::ordered_json> list = parse_model_json(text.substr(begin, length));
    CallMatch m{.kind = CallMatch::Kind::kCalls, .length = end};
    if (!list || !list->is_array() || list->empty()) return {.kind = CallMatch::Kind::kNotCalls, .length = end};
    for (const nlohmann::ordered_json& item : *list) {
      std::optional<ToolCall> call = call_from_json(*this, item, /*require_arguments=*/false);
      if (!call) return {.kind = CallMatch::Kind::kNotCalls, .length = end};
      m.calls.push_back(std::move(*call));
    }
    return m;
  }

  CallMatch args_match(std::string_view text, size_t begin, bool at_end) const {
    const size_t args = text.find(kArgs, begin);
    std::string_view name = text.substr(begin, args == std::string_view::npos ? std::string_view::npos : args - begin);
    if (args == std::string_view::npos && !at_end) name.remove_suffix(partial_tag_length(name, kArgsTag));
    const bool plain = name.size() <= kMaxNameBytes && name.find_first_of(" \t\r\n[{\"") == std::string_view::npos;
    if (!plain) return {.kind = CallMatch::Kind::kNotCalls, .length = kToolCalls.size()};
    if (args == std::string_view::npos) return need_more_or_not(text, at_end);
    const size_t object = skip_blank(text, args + kArgs.size());
    if (object == text.size()) return need_more_or_not(text, at_end);
    if (name.empty() || text[object] != '{') return {.kind = CallMatch::Kind::kNotCalls, .length = object};
    const size_t length = json_value_length(text.substr(object));
    if (length == std::string_view::npos) return need_more_or_not(text, at_end);
    const std::optional<nlohmann::ordered_json> j = parse_model_json(text.substr(object, length));
    if (!j || !j->is_object()) return {.kind = CallMatch::Kind::kNotCalls, .length = object + length};
    return {.kind = CallMatch::Kind::kCalls,
            .length = object + length,
            .calls = {ToolCall{.id = make_call_id(), .name = std::string(name), .arguments = j->dump()}}};
  }
};

}  // namespace

const ToolParser& mistral_tool_parser() {
  static const MistralParser parser;
  return parser;
}

}  // namespace strata::server
