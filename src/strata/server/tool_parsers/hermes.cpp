// hermes (Qwen2.5, Qwen3, Hermes, NousResearch): <tool_call>{"name": ..., "arguments":
// {...}}</tool_call> blocks, any number of them, anywhere in the text. An unclosed final
// block (generation stopped before </tool_call>) is read too.
#include "strata/server/tool_parsers/families.h"

#include "strata/server/tool_parsers/call_arguments.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kMarkers[] = {kOpen};

class HermesParser final : public ToolParser {
 public:
  std::string_view name() const override { return "hermes"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }

  CallMatch match(std::string_view text, bool at_end, const nlohmann::ordered_json&) const override {
    const std::optional<Block> block = closed_block(text, kOpen.size(), kClose, at_end);
    if (!block) return {.kind = CallMatch::Kind::kNeedMore};
    std::optional<ToolCall> call = call_from_object_text(*this, block->body, /*require_arguments=*/false);
    if (!call) return {.kind = CallMatch::Kind::kNotCalls, .length = block->length};
    return {.kind = CallMatch::Kind::kCalls, .length = block->length, .calls = {std::move(*call)}};
  }

  std::vector<PartialCall> partial_calls(std::string_view text, const nlohmann::ordered_json&) const override {
    const size_t begin = skip_blank(text, kOpen.size());
    if (begin == text.size() || text[begin] != '{') return {};
    std::optional<PartialCall> call = partial_call_object(text.substr(begin));
    if (!call) return {};
    return {std::move(*call)};
  }

  std::optional<ForcedShape> forced_shape() const override {
    return ForcedShape{.literals = {.call_begin = std::string(kOpen) + "\n{\"name\": \"",
                                    .name_end = "\", \"arguments\": ",
                                    .call_end = "}\n" + std::string(kClose),
                                    .separator = "\n"}};
  }
};

}  // namespace

const ToolParser& hermes_tool_parser() {
  static const HermesParser parser;
  return parser;
}

}  // namespace strata::server
