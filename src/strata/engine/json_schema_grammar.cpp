#include "strata/engine/json_schema_grammar.h"

#include "strata/engine/json_lexing.h"

#include <set>

#include "strata/core/error.h"

namespace strata {
namespace {

using namespace json_lexing;

using Kind = CompiledSchema::Kind;

const char* kKeywords =
    "type (one or a list), properties, required, additionalProperties, items, enum, const, anyOf, oneOf, $ref to "
    "$defs / definitions, title, description, default";

using Json = nlohmann::ordered_json;

// Compiles a schema node by node; $ref targets are compiled where they are used (a recursive
// schema runs into the depth limit).
class Compiler {
 public:
  explicit Compiler(const Json& root, CompiledSchema& out) : root_(root), out_(out) {}

  int32_t compile(const Json& s, int depth) {
    if (depth > 16) fail("json_schema: nested deeper than 16 levels (a recursive $ref?)");
    if (!s.is_object()) fail("json_schema: a schema must be an object, got {}", s.dump());
    static const std::set<std::string> kSupported = {
        "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "oneOf",
        "$ref", "$defs", "definitions", "title", "description", "default", "$schema"};
    for (const auto& [key, value] : s.items())
      if (!kSupported.contains(key)) fail("json_schema: keyword '{}' is not supported; supported: {}", key, kKeywords);
    if (s.contains("$ref")) return compile(resolve(s["$ref"]), depth + 1);
    const auto index = static_cast<int32_t>(out_.nodes.size());
    out_.nodes.emplace_back();
    CompiledSchema::Node node = s.contains("enum") || s.contains("const") ? choices(s)
                                : s.contains("anyOf") || s.contains("oneOf") ? any_of(s.contains("anyOf") ? s["anyOf"] : s["oneOf"], depth)
                                : s.contains("type") && s["type"].is_array() ? type_list(s["type"], depth)
                                                                             : typed(s, depth);
    out_.nodes[index] = std::move(node);
    return index;
  }

 private:
  const Json& resolve(const Json& ref) {
    const std::string path = ref.is_string() ? ref.get<std::string>() : "";
    for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
      const std::string p = prefix;
      const std::string section = p.substr(2, p.size() - 3);
      if (path.rfind(p, 0) == 0 && root_.contains(section) && root_[section].contains(path.substr(p.size())))
        return root_[section][path.substr(p.size())];
    }
    fail("json_schema: $ref {} does not name an entry of $defs or definitions", ref.dump());
  }

  CompiledSchema::Node choices(const Json& s) {
    CompiledSchema::Node node{.kind = Kind::kChoice};
    const Json values = s.contains("const") ? Json::array({s["const"]}) : s["enum"];
    if (!values.is_array() || values.empty()) fail("json_schema: 'enum' must be a non-empty array");
    if (values.size() > 64) fail("json_schema: at most 64 enum values");
    for (const Json& v : values) {
      if (!v.is_string() && !v.is_boolean() && !v.is_null())
        fail("json_schema: enum and const values must be strings, booleans or null, got {}", v.dump());
      node.choices.push_back(v.dump());
      node.first_bytes.set(static_cast<unsigned char>(node.choices.back()[0]));
    }
    return node;
  }

  // Alternatives must start with different bytes, so the first byte picks one.
  CompiledSchema::Node any_of(const Json& list, int depth) {
    if (!list.is_array() || list.empty()) fail("json_schema: anyOf / oneOf must be a non-empty array");
    CompiledSchema::Node node{.kind = Kind::kAnyOf};
    for (const Json& alternative : list) {
      const int32_t a = compile(alternative, depth + 1);
      if ((node.first_bytes & out_.nodes[a].first_bytes).any())
        fail("json_schema: anyOf alternatives {} start alike (e.g. two strings or two objects); only alternatives "
             "of different kinds (such as a type and null) are supported", list.dump());
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

  CompiledSchema::Node typed(const Json& s, int depth) {
    CompiledSchema::Node node;
    const std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
    if (type == "object") {
      node.kind = Kind::kObject;
      node.first_bytes.set('{');
      if (s.contains("properties")) {
        if (!s["properties"].is_object()) fail("json_schema: 'properties' must be an object");
        for (const auto& [key, sub] : s["properties"].items())
          node.properties.emplace_back(nlohmann::json(key).dump(), compile(sub, depth + 1));
      }
    } else if (type == "array") {
      node.kind = Kind::kArray;
      node.first_bytes.set('[');
      if (!s.contains("items")) fail("json_schema: an array needs 'items'");
      node.items = compile(s["items"], depth + 1);
    } else if (type == "string") {
      node.kind = Kind::kString;
      node.first_bytes.set('"');
    } else if (type == "number" || type == "integer") {
      node.kind = type == "number" ? Kind::kNumber : Kind::kInteger;
      node.first_bytes.set('-');
      for (char d = '0'; d <= '9'; ++d) node.first_bytes.set(static_cast<unsigned char>(d));
    } else if (type == "boolean" || type == "null") {
      return choices(Json{{"enum", type == "null" ? Json::array({nullptr}) : Json::array({true, false})}});
    } else {
      fail("json_schema: 'type' must be object, array, string, number, integer, boolean or null, got {}",
           s.contains("type") ? s["type"].dump() : "nothing");
    }
    return node;
  }

  const Json& root_;
  CompiledSchema& out_;
};

}  // namespace

std::shared_ptr<const CompiledSchema> CompiledSchema::compile(const nlohmann::ordered_json& schema) {
  auto out = std::make_shared<CompiledSchema>();
  Compiler(schema, *out).compile(schema, 0);
  return out;
}

bool JsonSchemaGrammar::feed(unsigned char c) {
  const char one = static_cast<char>(c);
  return feed_all(*this, std::string_view(&one, 1));
}

bool JsonSchemaGrammar::feed(std::string_view bytes) { return feed_all(*this, bytes); }

bool JsonSchemaGrammar::step(unsigned char c) {
  if (done_) return is_space(c);
  if (leaf_ != Leaf::kNone) return leaf_step(c);
  if (depth_ > 0) return frame_step(c);
  if (is_space(c)) return true;  // before the root value
  return start_value(0, c);
}

bool JsonSchemaGrammar::value_done() {
  if (depth_ == 0) done_ = true;  // else the frame's phase already says what comes next
  return true;
}

bool JsonSchemaGrammar::start_value(int32_t node_index, unsigned char c) {
  const CompiledSchema::Node& node = schema_->nodes[node_index];
  switch (node.kind) {
    case Kind::kObject:
    case Kind::kArray:
      if (c != (node.kind == Kind::kObject ? '{' : '[') || depth_ == stack_.size()) return false;
      stack_[depth_++] = Frame{.node = node_index, .phase = 1, .index = 0};
      return true;
    case Kind::kString:
      if (c != '"') return false;
      leaf_ = Leaf::kString;
      string_ = {};
      return true;
    case Kind::kNumber:
    case Kind::kInteger:
      if (c != '-' && !is_digit(c)) return false;
      integer_ = node.kind == Kind::kInteger;
      number_ = number_start(c);
      leaf_ = Leaf::kNumber;
      return true;
    case Kind::kAnyOf:
      for (int32_t alternative : node.alternatives)
        if (schema_->nodes[alternative].first_bytes.test(c)) return start_value(alternative, c);
      return false;
    case Kind::kChoice:
      candidates_ = 0;
      for (size_t k = 0; k < node.choices.size(); ++k)
        if (static_cast<unsigned char>(node.choices[k][0]) == c) candidates_ |= uint64_t{1} << k;
      if (candidates_ == 0) return false;
      leaf_ = Leaf::kChoice;
      leaf_node_ = node_index;
      text_pos_ = 1;
      return true;
  }
  return false;
}

// Phases. Object: 1 before key `index` (or '}' after the last), 2 after the key, 3 after ':',
// 4 after the value. Array: 1 after '[', 2 after an item, 3 after ','.
bool JsonSchemaGrammar::frame_step(unsigned char c) {
  if (is_space(c)) return true;
  Frame& f = stack_[depth_ - 1];
  const CompiledSchema::Node& node = schema_->nodes[f.node];
  const bool object = node.kind == Kind::kObject;
  const size_t num_props = node.properties.size();
  auto close = [&](char closer) {
    if (c != closer) return false;
    --depth_;
    return value_done();
  };
  if (object) {
    switch (f.phase) {
      case 1:
        if (f.index == num_props) return close('}');
        if (c != '"') return false;
        leaf_ = Leaf::kKey;
        text_pos_ = 1;
        return true;
      case 2: if (c != ':') return false; f.phase = 3; return true;
      case 3: f.phase = 4; return start_value(node.properties[f.index].second, c);
      default:
        if (f.index + 1 == num_props) return close('}');
        if (c != ',') return false;
        ++f.index;
        f.phase = 1;
        return true;
    }
  }
  if (f.phase == 1 && c == ']') return close(']');
  if (f.phase == 2) {
    if (c == ',') { f.phase = 3; return true; }
    return close(']');
  }
  f.phase = 2;
  ++f.index;
  return start_value(node.items, c);
}

bool JsonSchemaGrammar::leaf_step(unsigned char c) {
  switch (leaf_) {
    case Leaf::kKey: {
      const Frame& f = stack_[depth_ - 1];
      const std::string& key = schema_->nodes[f.node].properties[f.index].first;
      if (c != static_cast<unsigned char>(key[text_pos_])) return false;
      if (++text_pos_ == key.size()) {
        leaf_ = Leaf::kNone;
        stack_[depth_ - 1].phase = 2;
      }
      return true;
    }
    case Leaf::kString:
      switch (string_.step(c)) {
        case StringBody::Step::kTaken: return true;
        case StringBody::Step::kRefused: return false;
        case StringBody::Step::kClosed: break;
      }
      leaf_ = Leaf::kNone;
      return value_done();
    case Leaf::kChoice: {
      const std::vector<std::string>& choices = schema_->nodes[leaf_node_].choices;
      uint64_t next = 0;
      bool complete = false;
      for (size_t k = 0; k < choices.size(); ++k)
        if ((candidates_ >> k & 1) && text_pos_ < choices[k].size() &&
            static_cast<unsigned char>(choices[k][text_pos_]) == c) {
          next |= uint64_t{1} << k;
          complete = complete || text_pos_ + 1 == choices[k].size();
        }
      if (next == 0) return false;
      candidates_ = next;
      ++text_pos_;
      if (complete) { leaf_ = Leaf::kNone; return value_done(); }
      return true;
    }
    case Leaf::kNumber:
      switch (number_step(number_, c, integer_)) {
        case NumberStep::kTaken: return true;
        case NumberStep::kRefused: return false;
        case NumberStep::kEnded: break;
      }
      leaf_ = Leaf::kNone;
      value_done();
      return step(c);  // the byte after the number, read where the number ended
    case Leaf::kNone: break;
  }
  return false;
}

}  // namespace strata
