// openai (gpt-oss, harmony): a call is a message to a function,
//   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>
// (the recipient may also stand before <|channel|>). Other messages' markup is dropped and
// their text stays content; with --reasoning-parser openai_gptoss the thinking is split off
// first. The markup is special tokens between the parts, so only a call of one known function
// is forced: its header ends the prompt and the decoder writes the arguments.
#include "strata/server/tool_parsers/families.h"

#include <algorithm>

#include "strata/server/tool_parsers/call_arguments.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kEndTags[] = {"<|call|>", "<|end|>", "<|return|>"};
constexpr std::string_view kMarkers[] = {"<|start|>", "<|channel|>", "<|call|>", "<|end|>", "<|return|>"};
constexpr std::string_view kFunctions = "functions.";
constexpr size_t kMaxHeaderBytes = 1024;

// The recipient a header names ("to=functions.get_weather"), empty when none.
std::string_view recipient(std::string_view header) {
  const size_t to = header.find("to=");
  if (to == std::string_view::npos) return {};
  const std::string_view rest = header.substr(to + 3);
  return rest.substr(0, rest.find_first_of(" <"));
}

// The earliest end tag at or after `from`: its position and length (npos when none).
std::pair<size_t, size_t> find_end_tag(std::string_view text, size_t from) {
  std::pair<size_t, size_t> best{std::string_view::npos, 0};
  for (std::string_view tag : kEndTags) {
    const size_t at = text.find(tag, from);
    if (at < best.first) best = {at, tag.size()};
  }
  return best;
}

class HarmonyParser final : public ToolParser {
 public:
  std::string_view name() const override { return "openai"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }
  bool needs_special_tokens() const override { return true; }

  CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json&) const override {
    for (std::string_view tag : kEndTags)
      if (text.starts_with(tag)) return {.kind = CallMatch::Kind::kCalls, .length = tag.size()};  // markup
    // A header is short: decided on its first kMaxHeaderBytes, so any split decides alike.
    const size_t message = text.substr(0, kMaxHeaderBytes).find(kMessage);
    if (message == std::string_view::npos) {
      if (!at_end && text.size() < kMaxHeaderBytes) return {.kind = CallMatch::Kind::kNeedMore};
      const auto marker = std::find_if(std::begin(kMarkers), std::end(kMarkers),
                                       [&](std::string_view m) { return text.starts_with(m); });
      return {.kind = CallMatch::Kind::kNotCalls, .length = marker->size()};
    }
    const size_t body = message + kMessage.size();
    const std::string_view to = recipient(text.substr(0, message));
    // Not a call: the header goes, the body flows on as content.
    if (!to.starts_with(kFunctions)) return {.kind = CallMatch::Kind::kCalls, .length = body};
    const auto [end, tag_size] = find_end_tag(text, body);
    if (end == std::string_view::npos && !at_end) return {.kind = CallMatch::Kind::kNeedMore};
    const size_t body_end = end == std::string_view::npos ? text.size() : end;
    const size_t length = end == std::string_view::npos ? text.size() : end + tag_size;
    const std::optional<nlohmann::ordered_json> args = parse_model_json(text.substr(body, body_end - body));
    const std::string_view name = to.substr(kFunctions.size());
    if (!args || !args->is_object() || name.empty()) return {.kind = CallMatch::Kind::kNotCalls, .length = length};
    return {.kind = CallMatch::Kind::kCalls,
            .length = length,
            .calls = {ToolCall{.id = make_call_id(), .name = std::string(name),
                               .arguments = compact_json(text.substr(body, body_end - body))}}};
  }

  // A message to a function whose header is whole and whose arguments have begun.
  std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json&) const override {
    const size_t message = text.substr(0, kMaxHeaderBytes).find(kMessage);
    if (message == std::string_view::npos) return {};
    const std::string_view to = recipient(text.substr(0, message));
    const size_t body = skip_blank(text, message + kMessage.size());
    if (!to.starts_with(kFunctions) || to.size() == kFunctions.size() || body == text.size() || text[body] != '{')
      return {};
    return {PartialCall{.name = std::string(to.substr(kFunctions.size())),
                        .arguments = arguments_prefix(text.substr(body)).text}};
  }

  // The template's generation prompt ends with <|start|>assistant.
  std::optional<std::string> one_call_prompt(std::string_view function) const override {
    return "<|channel|>commentary to=functions." + std::string(function) + " <|constrain|>json" + std::string(kMessage);
  }
};

}  // namespace

const ToolParser& harmony_tool_parser() {
  static const HarmonyParser parser;
  return parser;
}

}  // namespace strata::server
