#include "strata/server/tool_choice.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/core/error.h"
#include "strata/engine/gbnf_compiler.h"
#include "strata/server/api_error.h"

namespace strata::server {
namespace {

const char* kToolChoiceForms =
    "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";

const std::shared_ptr<const CompiledSchema>& any_object() {
  static const std::shared_ptr<const CompiledSchema> schema =
      CompiledSchema::compile(Json::parse(R"({"type": "object", "additionalProperties": true})"));
  return schema;
}

// The schema the arguments must follow: the function's parameters when the compiler can
// enforce them whole, else (unless the function is strict) any JSON object.
std::shared_ptr<const CompiledSchema> arguments_schema(const Json& function, size_t index) {
  const Json* parameters = find_field(function, "parameters");
  if (parameters == nullptr) return any_object();
  std::string why;
  try {
    std::shared_ptr<const CompiledSchema> schema = CompiledSchema::compile(*parameters);
    if (schema->nodes[schema->root].kind == CompiledSchema::Kind::kObject) return schema;
    why = "the parameters schema must describe an object";
  } catch (const Error& e) {
    why = e.what();
  }
  const Json* strict = find_field(function, "strict");
  if (strict == nullptr || !strict->is_boolean() || !strict->get<bool>()) return any_object();
  throw bad_request(fmt::format("tools[{}].function.parameters cannot be enforced as strict: {}; drop 'strict' to "
                                "let the arguments be any JSON object",
                                index, why),
                    "tools");
}

void check_forced_name(const std::string& name, size_t index) {
  const bool plain = !name.empty() && std::none_of(name.begin(), name.end(), [](char c) {
    return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20;
  });
  if (!plain)
    throw bad_request(fmt::format("tools[{}].function.name {} cannot be forced: a name must be non-empty, without "
                                  "quotes, backslashes or control characters",
                                  index, describe(Json(name))),
                      "tools");
}

// The requested function's name, or a 400 when the object is not a function choice.
std::string named_function(const Json& choice) {
  const Json* type = find_field(choice, "type");
  if (type != nullptr && type->is_string() && *type != "function")
    throw bad_request(fmt::format("tool_choice of type {} is not supported; {}", describe(*type), kToolChoiceForms),
                      "tool_choice");
  const Json* function = find_field(choice, "function");
  const Json* name = function != nullptr && function->is_object() ? find_field(*function, "name") : nullptr;
  if ((type != nullptr && !type->is_string()) || name == nullptr || !name->is_string())
    throw bad_request(kToolChoiceForms, "tool_choice");
  return name->get<std::string>();
}

// The functions a forced call may name (`only`: just that one), sorted by name.
std::vector<ToolCallFormat::Function> forced_functions(const Json& tools, const std::string* only) {
  std::vector<ToolCallFormat::Function> functions;
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& function = tools[i]["function"];
    const std::string name = function["name"].get<std::string>();
    if (only != nullptr && name != *only) continue;
    check_forced_name(name, i);
    functions.push_back({.name = name, .arguments = arguments_schema(function, i)});
  }
  std::sort(functions.begin(), functions.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < functions.size(); ++i)
    if (functions[i].name == functions[i - 1].name)
      throw bad_request(fmt::format("two tools are named {}; give each function its own name",
                                    describe(Json(functions[i].name))),
                        "tools");
  return functions;
}

void check_named_in_tools(const std::string& name, const Json& tools) {
  std::vector<std::string> names;
  for (const Json& tool : tools) {
    if (tool["function"]["name"] == name) return;
    names.push_back(describe(tool["function"]["name"]));
  }
  if (names.size() > 8) {
    names.resize(8);
    names.push_back("...");
  }
  throw bad_request(fmt::format("tool_choice names the function {}, which is not in 'tools' (given: {})",
                                describe(Json(name)), fmt::join(names, ", ")),
                    "tool_choice");
}

// A format without a forced shape: one call of a known function (named, or the only tool
// with "required"), its opening ending the prompt; else a 400 that names the parser.
void force_one_call(const ToolParser& parser, const Json& tools, ToolChoice& choice) {
  const bool one = choice.mode == ToolChoiceMode::kNamed || tools.size() == 1;
  const std::string name = choice.mode == ToolChoiceMode::kNamed ? choice.name : tools[0]["function"]["name"].get<std::string>();
  std::optional<std::string> prompt = one ? parser.one_call_prompt(name) : std::nullopt;
  if (!prompt) {
    const bool can_name = parser.one_call_prompt(name).has_value();
    throw bad_request(fmt::format("tool_choice {} cannot be enforced: the served model writes tool calls in the {} "
                                  "format (--tool-call-parser {}), which the constrained decoder cannot write{}; {}send "
                                  "tool_choice \"auto\", or serve with a --tool-call-parser whose format can be "
                                  "forced (hermes, llama3_json, mistral, deepseek_v3, qwen3_coder)",
                                  choice.mode == ToolChoiceMode::kNamed ? "naming a function" : "\"required\"",
                                  parser.name(), parser.name(), can_name ? " for a choice among several tools" : "",
                                  can_name ? "name one function in tool_choice, " : ""),
                      "tool_choice");
  }
  choice.forced_arguments = forced_functions(tools, &name).at(0).arguments;
  choice.forced_prefix = std::move(*prompt);
}

// A format whose calls a grammar describes: that grammar of the allowed functions.
bool force_by_grammar(const ToolParser& parser, const Json& tools, ToolChoice& choice) {
  const bool named = choice.mode == ToolChoiceMode::kNamed;
  Json functions = Json::array();
  for (const Json& tool : tools)
    if (!named || tool["function"]["name"] == choice.name) functions.push_back(tool["function"]);
  std::optional<std::string> gbnf;
  try {
    gbnf = parser.forced_grammar(functions, choice.parallel && !named);
    if (gbnf) choice.forced_grammar = compile_gbnf(*gbnf);
  } catch (const Error& e) {
    throw bad_request(fmt::format("the tools cannot be forced in the {} format: {}", parser.name(), e.what()), "tools");
  }
  return gbnf.has_value();
}

}  // namespace

void force_tool_calls(const ToolParser& parser, const Json& tools, ToolChoice& choice) {
  if (!choice.forces()) return;
  const bool named = choice.mode == ToolChoiceMode::kNamed;
  std::optional<ForcedShape> shape = parser.forced_shape();
  if (!shape && force_by_grammar(parser, tools, choice)) return;
  if (!shape) {
    force_one_call(parser, tools, choice);
    return;
  }
  // A named function is called once (as OpenAI and vLLM do); "required" may call several
  // unless parallel_tool_calls is false.
  auto format = std::make_shared<ToolCallFormat>(std::move(shape->literals));
  format->parallel = choice.parallel && !named;
  format->functions = forced_functions(tools, named ? &choice.name : nullptr);
  try {
    format->check();
  } catch (const Error& e) {
    throw bad_request(fmt::format("the tools cannot be forced in the {} format: {}", parser.name(), e.what()), "tools");
  }
  choice.forced = std::move(format);
  choice.forced_prefix = std::move(shape->prompt_suffix);
}

ToolChoice read_tool_choice(const Json& body, const Json& tools) {
  ToolChoice choice;
  choice.parallel = read_bool(body, "parallel_tool_calls").value_or(true);
  const Json* value = find_field(body, "tool_choice");
  if (value == nullptr) return choice;
  std::string name;
  if (value->is_string() && *value == "auto") return choice;
  if (value->is_string() && *value == "none") choice.mode = ToolChoiceMode::kNone;
  else if (value->is_string() && *value == "required") choice.mode = ToolChoiceMode::kRequired;
  else if (value->is_object()) choice.mode = ToolChoiceMode::kNamed;
  else throw bad_request(fmt::format("{}, got {}", kToolChoiceForms, describe(*value)), "tool_choice");
  if (choice.mode == ToolChoiceMode::kNone) return choice;
  if (choice.mode == ToolChoiceMode::kNamed) name = named_function(*value);
  if (tools.is_null())
    throw bad_request("tool_choice forces a tool call, but the request has no 'tools'; send the functions in "
                      "'tools' or leave tool_choice out",
                      "tool_choice");
  if (choice.mode == ToolChoiceMode::kNamed) check_named_in_tools(name, tools);
  choice.name = std::move(name);
  return choice;
}

}  // namespace strata::server
