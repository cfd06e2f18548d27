#include "strata/server/tool_choice.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/core/error.h"
#include "strata/server/api_error.h"
#include "strata/server/tool_call_parser.h"

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

}  // namespace

std::shared_ptr<const ToolCallFormat> hermes_tool_call_format(const Json& tools, const std::string* only,
                                                              bool parallel) {
  auto format = std::make_shared<ToolCallFormat>();
  format->call_begin = std::string(kToolCallOpen) + "\n{\"name\": \"";
  format->name_end = "\", \"arguments\": ";
  format->call_end = "}\n" + std::string(kToolCallClose);
  format->separator = "\n";
  format->parallel = parallel;
  for (size_t i = 0; i < tools.size(); ++i) {
    const Json& function = tools[i]["function"];
    const std::string name = function["name"].get<std::string>();
    if (only != nullptr && name != *only) continue;
    check_forced_name(name, i);
    format->functions.push_back({.name = name, .arguments = arguments_schema(function, i)});
  }
  std::sort(format->functions.begin(), format->functions.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  for (size_t i = 1; i < format->functions.size(); ++i)
    if (format->functions[i].name == format->functions[i - 1].name)
      throw bad_request(fmt::format("two tools are named {}; give each function its own name",
                                    describe(Json(format->functions[i].name))),
                        "tools");
  format->check();
  return format;
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
  // A named function is called once (as OpenAI and vLLM do); "required" may call several
  // unless parallel_tool_calls is false.
  const bool named = choice.mode == ToolChoiceMode::kNamed;
  if (named) check_named_in_tools(name, tools);
  choice.forced = hermes_tool_call_format(tools, named ? &name : nullptr, choice.parallel && !named);
  return choice;
}

}  // namespace strata::server
