#include "strata/server/tool_parsers/xml_call_grammar.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

// The rules every grammar shares: free text, bounded numbers, and JSON without "<" in strings.
constexpr std::string_view kValueRules = R"gbnf(
text ::= ([^<] | "<" [^/p<])*
int ::= "-"? [0-9] [0-9]{0,15}
num ::= int ("." [0-9] [0-9]{0,15})?
bool ::= "true" | "false"
jvalue ::= jobject | jarray | jstring | num | bool | "null"
jobject ::= "{" " "? (jstring " "? ":" " "? jvalue (" "? "," " "? jstring " "? ":" " "? jvalue)*)? " "? "}"
jarray ::= "[" " "? (jvalue (" "? "," " "? jvalue)*)? " "? "]"
jstring ::= "\"" ([^"\\<\x00-\x1F] | "\\" ["\\/bfnrt])* "\""
key ::= [a-zA-Z0-9_.-]+
)gbnf";

std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += {'\\', c};
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02X}", static_cast<int>(c));
    else out += c;
  }
  return out + "\"";
}

void check_markup_name(std::string_view name, std::string_view what) {
  if (name.empty() || name.find_first_of("<>\n") != std::string_view::npos)
    fail("{} '{}' cannot be written in the qwen3_coder markup: a name must be non-empty, without '<', '>' or "
         "newlines; rename it",
         what, name);
}

// A property's value: its enum strings, or the rule of its type (the parser's reading of it).
std::string value_rule(const Json& property) {
  if (!property.is_object()) return "text";
  if (const auto e = property.find("enum"); e != property.end() && e->is_array() && !e->empty()) {
    std::string alternatives;
    for (const Json& v : *e) {
      if (!v.is_string()) return "text";
      alternatives += (alternatives.empty() ? "" : " | ") + literal(v.get<std::string>());
    }
    return "(" + alternatives + ")";
  }
  const auto type = property.find("type");
  const Json* t = type == property.end() ? nullptr : (type->is_array() && !type->empty() ? &(*type)[0] : &*type);
  const std::string name = t != nullptr && t->is_string() ? t->get<std::string>() : "";
  if (name == "integer") return "int";
  if (name == "number") return "num";
  if (name == "boolean") return "bool";
  if (name == "null") return "\"null\"";
  if (name == "object") return "jobject";
  if (name == "array") return "jarray";
  return "text";
}

// A strict function asks for its schema to hold exactly: a keyword the grammar does not
// enforce is refused rather than ignored.
void check_strict(const Json& function, const Json& parameters) {
  if (function.value("strict", false) != true || !parameters.is_object()) return;
  const auto refuse = [&](const std::string& keyword) {
    fail("function '{}' is strict, but the qwen3_coder grammar enforces only its parameters' type, enum and "
         "required; '{}' would not hold; drop 'strict' or the keyword",
         function.value("name", ""), keyword);
  };
  for (const auto& [key, value] : parameters.items())
    if (key != "type" && key != "properties" && key != "required" && key != "additionalProperties" &&
        key != "description" && key != "title" && key != "$schema")
      refuse(key);
  const Json properties = parameters.value("properties", Json::object());
  for (const auto& [name, property] : properties.items()) {
    if (!property.is_object()) continue;
    for (const auto& [key, value] : property.items())
      if (key != "type" && key != "enum" && key != "description" && key != "title") refuse(name + "." + key);
  }
}

// fI ::= <function=NAME>, its parameters, </function>.
std::string function_rules(const Json& function, size_t i) {
  const std::string name = function.value("name", "");
  check_markup_name(name, "tool name");
  const Json parameters = function.value("parameters", Json::object());
  check_strict(function, parameters);
  const Json listed = parameters.is_object() ? parameters.value("properties", Json()) : Json();
  const Json properties = listed.is_object() ? listed : Json::object();
  const Json required = parameters.is_object() ? parameters.value("required", Json::array()) : Json::array();
  std::string rules, body;
  if (!listed.is_object()) body = R"( ("\n<parameter=" key ">\n" text "\n</parameter>")*)";
  size_t p = 0;
  for (const auto& [key, property] : properties.items()) {
    check_markup_name(key, "parameter name");
    const std::string rule = fmt::format("f{}p{}", i, p++);
    const bool needed = required.is_array() && std::find(required.begin(), required.end(), Json(key)) != required.end();
    rules += fmt::format("{} ::= {} {} \"\\n</parameter>\"\n", rule, literal("\n<parameter=" + key + ">\n"),
                         value_rule(property));
    body += " " + rule + (needed ? "" : "?");
  }
  return rules + fmt::format("f{} ::= {}{} \"\\n</function>\"\n", i, literal("<function=" + name + ">"), body);
}

}  // namespace

std::string xml_calls_gbnf(const Json& functions, bool parallel) {
  std::string grammar = parallel ? "root ::= call (\"\\n\" call)*\n" : "root ::= call\n";
  std::string alternatives;
  for (size_t i = 0; i < functions.size(); ++i) {
    grammar += function_rules(functions[i], i);
    alternatives += fmt::format("{}f{}", i > 0 ? " | " : "", i);
  }
  grammar += "call ::= \"<tool_call>\\n\" (" + alternatives + ") \"\\n</tool_call>\"\n";
  return grammar + std::string(kValueRules);
}

}  // namespace strata::server
