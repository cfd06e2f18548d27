// CompiledSchema::compile: a JSON schema (the strict-mode subset clients send as
// response_format json_schema) to the node graph JsonSchemaGrammar walks. Every keyword is
// either enforced or refused with an error naming it; annotations (title, description,
// default, $schema) are the only ones read and dropped.
#include "strata/engine/json_schema_grammar.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/ranges.h>

#include "strata/core/error.h"
#include "strata/engine/json_schema_keywords.h"

namespace strata {
namespace {

using Kind = CompiledSchema::Kind;
using Json = nlohmann::ordered_json;

const char* kKeywords =
    "type (one or a list), properties, required, additionalProperties, items, enum, const, anyOf, oneOf, $ref to "
    "# / $defs / definitions (recursion too), minLength, maxLength, pattern, format, minimum, maximum, "
    "exclusiveMinimum, exclusiveMaximum, minItems, maxItems, title, description, default";

bool is_annotation(const std::string& key) {
  return key == "title" || key == "description" || key == "default" || key == "$schema" || key == "$defs" ||
         key == "definitions";
}

// A client's value in an error message, short whatever its size.
std::string brief(const Json& v) {
  if (v.is_object()) return fmt::format("an object of {} keys", v.size());
  if (v.is_array() && v.size() > 8) return fmt::format("an array of {} items", v.size());
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 120) text = text.substr(0, 120) + "...";
  return text;
}

std::string type_of(const Json& s) {
  return s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
}

// Schemas nest no deeper than the recogniser's stack, so every compiled one can complete.
constexpr int kMaxDepth = JsonSchemaGrammar::kMaxDepth;

// Compiles a schema node by node. A $ref target is compiled once and shared by every use; a
// $ref back into a schema still being compiled (a recursive schema) is refused.
class Compiler {
 public:
  explicit Compiler(const Json& root, CompiledSchema& out) : root_(root), out_(out) {}

  int32_t compile(const Json& s, int depth) {
    if (depth > kMaxDepth) fail("json_schema: nested deeper than {} levels", kMaxDepth);
    if (s.is_boolean() && s.get<bool>()) return any_value();
    if (!s.is_object()) fail("json_schema: a schema must be an object, got {}", brief(s));
    check_keywords(s);
    if (s.contains("$ref")) return reference(s["$ref"], depth);
    if (s.contains("anyOf") || s.contains("oneOf")) return add(any_of(s.contains("anyOf") ? s["anyOf"] : s["oneOf"], depth));
    if (s.contains("enum") || s.contains("const")) return add(choices(s));
    if (s.contains("type") && s["type"].is_array()) return add(type_list(s["type"], depth));
    const std::string type = type_of(s);
    if (type.empty() && !s.contains("type")) {  // untyped: what the other keywords say, else anything
      if (s.contains("properties") || s.contains("required") || s.contains("additionalProperties"))
        return object(s, depth);
      return s.contains("items") ? array(s, depth) : any_value();
    }
    if (type == "object") return object(s, depth);
    if (type == "array") return array(s, depth);
    return add(scalar(s));
  }

 private:
  // Unknown keywords are refused; so are combinations whose parts would be ignored.
  static void check_keywords(const Json& s) {
    static const std::set<std::string> kSupported = {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "oneOf",
        "$ref", "$defs", "definitions", "title", "description", "default", "$schema", "minLength", "maxLength",
        "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"};
    std::vector<std::string> constraints;
    for (const auto& [key, value] : s.items()) {
      if (!kSupported.contains(key)) fail("json_schema: keyword '{}' is not supported; supported: {}", key, kKeywords);
      if (!is_annotation(key)) constraints.push_back(key);
    }
    for (const char* alone : {"$ref", "anyOf", "oneOf"})
      if (s.contains(alone) && constraints.size() > 1)
        fail("json_schema: '{}' beside {} is not supported; move the other keywords into the schemas it names", alone,
             fmt::join(constraints, ", "));
    if (s.contains("enum") && s.contains("const")) fail("json_schema: give 'enum' or 'const', not both");
    json_schema_keywords::check_types(s);
  }

  int32_t add(CompiledSchema::Node node) {
    if (out_.nodes.size() >= CompiledSchema::kMaxNodes)
      fail("json_schema: the schema is too large (over {} parts); simplify it", CompiledSchema::kMaxNodes);
    out_.nodes.push_back(std::move(node));
    return static_cast<int32_t>(out_.nodes.size() - 1);
  }

  // A $ref back into a schema still being compiled (recursion) gets a placeholder: an anyOf
  // of one alternative, the target, filled in when the target is done.
  int32_t reference(const Json& ref, int depth) {
    const std::string path = ref.is_string() ? ref.get<std::string>() : "";
    if (const auto it = compiled_refs_.find(path); it != compiled_refs_.end()) return it->second;
    if (in_progress_.contains(path)) {
      const auto [it, inserted] = placeholders_.try_emplace(path, -1);
      if (inserted) it->second = add({.kind = Kind::kAnyOf});
      return it->second;
    }
    return compile_target(path, resolve(ref, path), depth);
  }

 public:
  int32_t compile_target(const std::string& path, const Json& target, int depth) {
    in_progress_.insert(path);
    const int32_t node = compile(target, depth);
    in_progress_.erase(path);
    compiled_refs_[path] = node;
    if (const auto it = placeholders_.find(path); it != placeholders_.end()) out_.nodes[it->second].alternatives = {node};
    return node;
  }

  // After recursion: anyOf first bytes to a fixpoint, then the checks that needed them.
  void settle_alternatives() {
    for (bool changed = true; changed;) {
      changed = false;
      for (CompiledSchema::Node& node : out_.nodes) {
        if (node.kind != Kind::kAnyOf) continue;
        std::bitset<256> bytes;
        for (int32_t a : node.alternatives) bytes |= out_.nodes[a].first_bytes;
        changed = changed || bytes != node.first_bytes;
        node.first_bytes = bytes;
      }
    }
    for (size_t n = 0; n < out_.nodes.size(); ++n) check_alternatives(static_cast<int32_t>(n));
  }

 private:
  void check_alternatives(int32_t index) const {
    const CompiledSchema::Node& node = out_.nodes[index];
    if (node.kind != Kind::kAnyOf) return;
    std::bitset<256> seen;
    for (int32_t a : node.alternatives) {
      if ((seen & out_.nodes[a].first_bytes).any())
        fail("json_schema: anyOf alternatives start alike (e.g. two strings or two objects); only alternatives of "
             "different kinds (such as a type and null) are supported");
      seen |= out_.nodes[a].first_bytes;
    }
    // An anyOf that reaches itself through anyOfs alone would read no byte before recursing.
    std::vector<int32_t> todo(node.alternatives.begin(), node.alternatives.end());
    for (size_t steps = 0; !todo.empty() && steps <= out_.nodes.size(); ++steps) {
      const int32_t next = todo.back();
      todo.pop_back();
      if (next == index)
        fail("json_schema: a $ref refers back to itself before any object or array (a recursive schema must "
             "recurse inside an object's property or an array's items)");
      if (out_.nodes[next].kind == Kind::kAnyOf)
        todo.insert(todo.end(), out_.nodes[next].alternatives.begin(), out_.nodes[next].alternatives.end());
    }
    if (node.first_bytes.none()) fail("json_schema: an anyOf or $ref describes no value");
  }

  const Json& resolve(const Json& ref, const std::string& path) const {
    if (path == "#") return root_;
    for (const std::string prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string section = prefix.substr(2, prefix.size() - 3);
      if (path.rfind(prefix, 0) == 0 && root_.contains(section) && root_[section].is_object() &&
          root_[section].contains(path.substr(prefix.size())))
        return root_[section][path.substr(prefix.size())];
    }
    fail("json_schema: $ref {} does not name the root (#) or an entry of $defs or definitions", brief(ref));
  }

  CompiledSchema::Node choices(const Json& s) const {
    CompiledSchema::Node node{.kind = Kind::kChoice};
    const Json values = s.contains("const") ? Json::array({s["const"]}) : s["enum"];
    if (!values.is_array() || values.empty()) fail("json_schema: 'enum' must be a non-empty array");
    if (values.size() > 64) fail("json_schema: at most 64 enum values, got {}", values.size());
    for (const Json& v : values) {
      if (!v.is_string() && !v.is_boolean() && !v.is_null())
        fail("json_schema: enum and const values must be strings, booleans or null, got {}", brief(v));
      if (s.contains("type") && !value_has_type(v, s["type"]))
        fail("json_schema: enum value {} is not of the schema's type {}", brief(v), brief(s["type"]));
      node.choices.push_back(v.dump());
      node.first_bytes.set(static_cast<unsigned char>(node.choices.back()[0]));
    }
    return node;
  }

  static bool value_has_type(const Json& v, const Json& type) {
    if (type.is_array()) {
      for (const Json& t : type)
        if (value_has_type(v, t)) return true;
      return false;
    }
    return (type == "string" && v.is_string()) || (type == "boolean" && v.is_boolean()) ||
           (type == "null" && v.is_null());
  }

  // Alternatives must start with different bytes, so the first byte picks one.
  CompiledSchema::Node any_of(const Json& list, int depth) {
    if (!list.is_array() || list.empty()) fail("json_schema: anyOf / oneOf must be a non-empty array");
    CompiledSchema::Node node{.kind = Kind::kAnyOf};
    for (const Json& alternative : list) {
      const int32_t a = compile(alternative, depth + 1);  // first bytes and overlaps: settle_alternatives
      node.first_bytes |= out_.nodes[a].first_bytes;
      node.alternatives.push_back(a);
    }
    return node;
  }

  CompiledSchema::Node type_list(const Json& types, int depth) {
    Json list = Json::array();
    for (const Json& t : types) list.push_back(Json{{"type", t}});
    return any_of(list, depth);
  }

  // Properties in order, `required` ones forced; or a map: additionalProperties true or a
  // schema and no properties. Absent additionalProperties is false, as in strict mode.
  int32_t object(const Json& s, int depth) {
    const int32_t index = add({.kind = Kind::kObject});
    out_.nodes[index].first_bytes.set('{');
    const Json* extra = s.contains("additionalProperties") ? &s["additionalProperties"] : nullptr;
    const bool map = extra != nullptr && !(extra->is_boolean() && !extra->get<bool>());
    if (map && (s.contains("properties") || s.contains("required")))
      fail("json_schema: 'additionalProperties' other than false beside 'properties' or 'required' is not "
           "supported; set it to false, or describe a map with additionalProperties alone");
    if (map) {
      if (!extra->is_boolean() && !extra->is_object())
        fail("json_schema: 'additionalProperties' must be a boolean or a schema, got {}", brief(*extra));
      const int32_t values = compile(*extra, depth + 1);
      out_.nodes[index].additional = values;
      return index;
    }
    std::vector<CompiledSchema::Property> properties = listed_properties(s, depth);
    out_.nodes[index].properties = std::move(properties);
    return index;
  }

  std::vector<CompiledSchema::Property> listed_properties(const Json& s, int depth) {
    std::vector<CompiledSchema::Property> out;
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) fail("json_schema: 'properties' must be an object");
      if (s["properties"].size() > CompiledSchema::kMaxProperties)
        fail("json_schema: at most {} properties per object", CompiledSchema::kMaxProperties);
      for (const auto& [key, sub] : s["properties"].items())
        out.push_back({.key = nlohmann::json(key).dump(), .node = compile(sub, depth + 1)});
    }
    if (!s.contains("required")) return out;
    if (!s["required"].is_array()) fail("json_schema: 'required' must be an array of property names");
    for (const Json& name : s["required"]) {
      const std::string key = name.is_string() ? nlohmann::json(name.get<std::string>()).dump() : "";
      auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.key == key; });
      if (it == out.end())
        fail("json_schema: 'required' names {}, which is not in 'properties' (and no other keys are allowed)",
             brief(name));
      it->required = true;
    }
    return out;
  }

  int32_t array(const Json& s, int depth) {
    const int32_t index = add({.kind = Kind::kArray});
    out_.nodes[index].first_bytes.set('[');
    if (s.contains("items") && !s["items"].is_object() && !(s["items"].is_boolean() && s["items"].get<bool>()))
      fail("json_schema: 'items' must be a schema (an object), got {}", brief(s["items"]));
    const int32_t items = s.contains("items") ? compile(s["items"], depth + 1) : any_value();
    out_.nodes[index].items = items;
    json_schema_keywords::read_array(s, out_.nodes[index]);
    return index;
  }

  CompiledSchema::Node scalar(const Json& s) const {
    CompiledSchema::Node node;
    const std::string type = type_of(s);
    if (type == "string") {
      node.kind = Kind::kString;
      node.first_bytes.set('"');
      json_schema_keywords::read_string(s, node);
    } else if (type == "number" || type == "integer") {
      node.kind = type == "number" ? Kind::kNumber : Kind::kInteger;
      json_schema_keywords::read_number(s, node);
      node.first_bytes.set('-', node.bounds.negative);
      for (char d = '0'; d <= '9'; ++d) node.first_bytes.set(static_cast<unsigned char>(d), node.bounds.non_negative);
    } else if (type == "boolean" || type == "null") {
      return choices(Json{{"enum", type == "null" ? Json::array({nullptr}) : Json::array({true, false})}});
    } else {
      fail("json_schema: 'type' must be object, array, string, number, integer, boolean or null, got {}",
           brief(s["type"]));
    }
    return node;
  }

  // Any JSON value (an empty schema, `true`, additionalProperties: true, items left out): a
  // cycle of nodes built once, the recogniser's depth bounding what it accepts.
  int32_t any_value() {
    if (any_ >= 0) return any_;
    any_ = add({.kind = Kind::kAnyOf});
    const int32_t object = add({.kind = Kind::kObject, .additional = any_});
    const int32_t array = add({.kind = Kind::kArray, .items = any_});
    const int32_t text = add(scalar(Json{{"type", "string"}}));
    const int32_t number = add(scalar(Json{{"type", "number"}}));
    const int32_t literal = add(choices(Json{{"enum", {true, false, nullptr}}}));
    out_.nodes[object].first_bytes.set('{');
    out_.nodes[array].first_bytes.set('[');
    for (const int32_t a : {object, array, text, number, literal}) {
      out_.nodes[any_].alternatives.push_back(a);
      out_.nodes[any_].first_bytes |= out_.nodes[a].first_bytes;
    }
    return any_;
  }

  const Json& root_;
  CompiledSchema& out_;
  std::map<std::string, int32_t> compiled_refs_;
  std::set<std::string> in_progress_;
  std::map<std::string, int32_t> placeholders_;  // recursive $refs' nodes
  int32_t any_ = -1;
};

}  // namespace

std::shared_ptr<const CompiledSchema> CompiledSchema::compile(const nlohmann::ordered_json& schema) {
  auto out = std::make_shared<CompiledSchema>();
  Compiler compiler(schema, *out);
  out->root = compiler.compile_target("#", schema, 0);
  compiler.settle_alternatives();
  return out;
}

}  // namespace strata
