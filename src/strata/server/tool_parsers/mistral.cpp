// mistral: [TOOL_CALLS] then a JSON list [{"name": ..., "arguments": {...}}, ...] (tokenizer
// versions before 11), or name[ARGS]{...} (version 11 on: Mistral Small 3.2, Magistral,
// Devstral), [TOOL_CALLS] again before each further call. Ids are 9 alphanumerics: Mistral's
// chat templates refuse any other tool-call id when the conversation comes back.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/random_id.h"
#include "strata/server/stream_tags.h"
#include "strata/server/tool_parsers/call_arguments.h"
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

  std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json&) const override {
    const size_t begin = skip_blank(text, kToolCalls.size());
    if (begin == text.size()) return {};
    return text[begin] == '[' ? list_partial(text, begin) : args_partial(text, begin);
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
    for (size_t at = skip_blank(text, begin + 1); m.calls.size() < list->size(); at = next_item(text, at)) {
      const bool object = at < text.size() && text[at] == '{';
      const size_t item = object ? json_value_length(text.substr(at)) : std::string_view::npos;
      std::optional<ToolCall> call = item == std::string_view::npos ? std::nullopt
          : call_from_object_text(*this, text.substr(at, item), /*require_arguments=*/false);
      if (!call) return {.kind = CallMatch::Kind::kNotCalls, .length = end};
      m.calls.push_back(std::move(*call));
    }
    return m;
  }

  // From an item of a list: where the next item starts (or where the list goes on).
  static size_t next_item(std::string_view text, size_t at) {
    const size_t length = json_value_length(text.substr(at));
    if (length == std::string_view::npos) return text.size();
    at = skip_blank(text, at + length);
    return at < text.size() && text[at] == ',' ? skip_blank(text, at + 1) : text.size();
  }

  // The list's calls so far: the whole items, then the one being written.
  std::vector<PartialCall> list_partial(std::string_view text, size_t begin) const {
    std::vector<PartialCall> calls;
    for (size_t at = skip_blank(text, begin + 1); at < text.size() && text[at] == '{'; at = next_item(text, at)) {
      const size_t item = json_value_length(text.substr(at));
      std::optional<PartialCall> call = partial_call_object(text.substr(at));
      if (item != std::string_view::npos) {
        std::optional<ToolCall> whole = call_from_object_text(*this, text.substr(at, item), /*require_arguments=*/false);
        call = whole ? std::optional<PartialCall>({.name = whole->name, .arguments = whole->arguments}) : std::nullopt;
      }
      if (!call) break;
      calls.push_back(std::move(*call));
      if (item == std::string_view::npos) break;
    }
    return calls;
  }

  // name[ARGS]{...} so far: the call once [ARGS] has come and its object begun.
  std::vector<PartialCall> args_partial(std::string_view text, size_t begin) const {
    const size_t args = text.find(kArgs, begin);
    if (args == std::string_view::npos) return {};
    const std::string_view name = text.substr(begin, args - begin);
    const size_t object = skip_blank(text, args + kArgs.size());
    const bool plain = !name.empty() && name.size() <= kMaxNameBytes &&
                       name.find_first_of(" \t\r\n[{\"") == std::string_view::npos;
    if (!plain || object == text.size() || text[object] != '{') return {};
    return {PartialCall{.name = std::string(name), .arguments = arguments_prefix(text.substr(object)).text}};
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
            .calls = {ToolCall{.id = make_call_id(), .name = std::string(name),
                               .arguments = compact_json(text.substr(object, length))}}};
  }
};

}  // namespace

const ToolParser& mistral_tool_parser() {
  static const MistralParser parser;
  return parser;
}

}  // namespace strata::server
