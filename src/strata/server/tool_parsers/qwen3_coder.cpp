// qwen3_coder (Qwen3-Coder, Qwen3.5): XML calls,
//   <tool_call>\n<function=NAME>\n<parameter=P>\nvalue\n</parameter>\n...</function>\n</tool_call>
// Values are text; each becomes the JSON type the tool's parameters schema gives it
// (integer, number, boolean, object, array, null), else a string. Streamed, a parameter's
// "key":value is given once its value is whole. Forced calls are written through a GBNF
// grammar of the tools (xml_call_grammar).
#include "strata/server/tool_parsers/families.h"

#include <algorithm>
#include <charconv>

#include "strata/server/tool_parsers/parse_helpers.h"
#include "strata/server/tool_parsers/xml_call_grammar.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";
constexpr std::string_view kFunction = "<function=";
constexpr std::string_view kFunctionEnd = "</function>";
constexpr std::string_view kParameter = "<parameter=";
constexpr std::string_view kParameterEnd = "</parameter>";
constexpr std::string_view kMarkers[] = {kOpen};

// The schema type of parameter `param` of function `function`, "" when none is given.
std::string schema_type(const Json& tools, std::string_view function, std::string_view param) {
  if (!tools.is_array()) return {};
  for (const Json& tool : tools) {
    const Json* f = tool.contains("function") ? &tool["function"] : nullptr;
    if (f == nullptr || !f->is_object() || f->value("name", Json()) != function) continue;
    const Json params = f->value("parameters", Json());
    if (!params.is_object() || !params.contains("properties") || !params["properties"].contains(std::string(param)))
      return {};
    const Json& type = params["properties"][std::string(param)].value("type", Json());
    if (type.is_string()) return type.get<std::string>();
    if (type.is_array() && !type.empty() && type[0].is_string()) return type[0].get<std::string>();
    return {};
  }
  return {};
}

// `text` as the schema's type; a value that does not read as that type stays a string.
Json typed_value(std::string_view text, const std::string& type) {
  if (type == "string" || type.empty()) return Json(std::string(text));
  if (text == "null") return Json(nullptr);
  if (type == "boolean") {
    if (text == "true" || text == "True") return true;
    if (text == "false" || text == "False") return false;
    return Json(std::string(text));
  }
  if (type == "integer") {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size()) return v;
  }
  if (type == "number" || type == "integer" || type == "object" || type == "array") {
    std::optional<Json> j = parse_model_json(text);
    const bool fits = j && (type == "object"   ? j->is_object()
                            : type == "array"  ? j->is_array()
                                               : j->is_number());
    if (fits) return std::move(*j);
  }
  return Json(std::string(text));
}

// One leading and one trailing newline belong to the markup.
std::string_view strip_newlines(std::string_view v) {
  if (v.starts_with('\n')) v.remove_prefix(1);
  if (v.ends_with('\n')) v.remove_suffix(1);
  return v;
}

// A call's function and parameters as far as they are whole: each parameter as its JSON
// "key":value text, in the order written (a repeated key stays as written).
struct XmlCall {
  std::string name;
  std::vector<std::string> parameters;
};

// The end of a parameter's value: </parameter>, or (left open) where the next parameter
// starts; npos when neither has come.
size_t value_end(std::string_view rest, size_t from) {
  const size_t close = rest.find(kParameterEnd, from);
  const size_t next = rest.find(kParameter, from);
  return std::min(close, next);
}

// The body after <tool_call>; `whole`: the call has closed (a last value left open runs to
// </function> or the end). Nullopt when it is no call, or (not whole) its name is not whole yet.
std::optional<XmlCall> read_xml_call(std::string_view body, bool whole, const Json& tools) {
  body = body.substr(skip_blank(body, 0));
  if (!body.starts_with(kFunction)) return std::nullopt;
  const size_t name_end = body.find('>');
  if (name_end == std::string_view::npos) return std::nullopt;
  const std::string_view name = trim_blank(body.substr(kFunction.size(), name_end - kFunction.size()));
  if (name.empty() || name.find_first_of("<\n") != std::string_view::npos) return std::nullopt;
  std::string_view rest = body.substr(name_end + 1);
  const size_t function_end = whole ? rest.rfind(kFunctionEnd) : std::string_view::npos;
  if (function_end != std::string_view::npos) rest = rest.substr(0, function_end);
  XmlCall call{.name = std::string(name)};
  for (size_t at = rest.find(kParameter); at != std::string_view::npos; at = rest.find(kParameter, at)) {
    const size_t key_end = rest.find('>', at);
    if (key_end == std::string_view::npos) return whole ? std::nullopt : std::optional<XmlCall>(std::move(call));
    const std::string_view key = trim_blank(rest.substr(at + kParameter.size(), key_end - at - kParameter.size()));
    size_t end = value_end(rest, key_end);
    if (end == std::string_view::npos && !whole) break;
    if (end == std::string_view::npos) end = rest.size();
    const std::string_view value = strip_newlines(rest.substr(key_end + 1, end - key_end - 1));
    call.parameters.push_back(Json(std::string(key)).dump() + ":" +
                              typed_value(value, schema_type(tools, name, key)).dump());
    at = end;
  }
  return call;
}

// The arguments object's text: its whole parameters, closed once the call is.
std::string arguments_of(const XmlCall& call, bool whole) {
  std::string text = "{";
  for (size_t i = 0; i < call.parameters.size(); ++i) text += (i > 0 ? "," : "") + call.parameters[i];
  return whole ? text + "}" : text;
}

class Qwen3CoderParser final : public ToolParser {
 public:
  std::string_view name() const override { return "qwen3_coder"; }
  std::span<const std::string_view> start_markers() const override { return kMarkers; }

  CallMatch match(std::string_view text, bool at_end, const Json& tools) const override {
    const std::optional<Block> block = closed_block(text, kOpen.size(), kClose, at_end);
    if (!block) return {.kind = CallMatch::Kind::kNeedMore};
    const std::optional<XmlCall> call = read_xml_call(trim_blank(block->body), /*whole=*/true, tools);
    if (!call) return {.kind = CallMatch::Kind::kNotCalls, .length = block->length};
    return {.kind = CallMatch::Kind::kCalls,
            .length = block->length,
            .calls = {ToolCall{.id = make_call_id(), .name = call->name, .arguments = arguments_of(*call, true)}}};
  }

  std::optional<std::string> forced_grammar(const Json& functions, bool parallel) const override {
    return xml_calls_gbnf(functions, parallel);
  }

  // A parameter is given once its value is whole.
  std::vector<PartialCall> partial_calls(std::string_view text, const Json& tools) const override {
    const std::optional<XmlCall> call = read_xml_call(text.substr(kOpen.size()), /*whole=*/false, tools);
    if (!call) return {};
    return {PartialCall{.name = call->name, .arguments = arguments_of(*call, false)}};
  }
};

}  // namespace

const ToolParser& qwen3_coder_tool_parser() {
  static const Qwen3CoderParser parser;
  return parser;
}

}  // namespace strata::server
