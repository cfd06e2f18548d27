// The schema recogniser behind response_format json_schema: documents of the schema's shape
// (properties in order, the required ones present) complete; wrong keys, types, enum values
// and extra or missing properties are refused at their first byte; maps take any key;
// unsupported keywords and combinations are named, never ignored.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/json_schema_grammar.h"

namespace strata {
namespace {

const char* kSchema = R"({"type": "object", "properties": {
    "name": {"type": "string"}, "age": {"type": "integer"}, "score": {"type": "number"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
    "ok": {"type": "boolean"}, "none": {"type": "null"},
    "inner": {"type": "object", "properties": {"x": {"const": "y"}}, "required": ["x"]}},
  "required": ["name", "age", "score", "tags", "ok", "none", "inner"], "additionalProperties": false})";

size_t accepted_prefix(const CompiledSchema& schema, std::string_view text, bool* done = nullptr) {
  JsonSchemaGrammar g(&schema);
  size_t i = 0;
  while (i < text.size() && g.feed(static_cast<unsigned char>(text[i]))) ++i;
  if (done != nullptr) *done = g.done();
  return i;
}

TEST(JsonSchemaGrammar, AcceptsTheSchemasShape) {
  const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(kSchema));
  for (std::string_view text : {
           R"({"name": "Al\"i\u00e9", "age": -30, "score": 1.5e-3, "tags": ["a", "b", "a"], "ok": true, "none": null, "inner": {"x": "y"}})",
           "{\n \"name\":\"\",\"age\":0,\"score\":2,\"tags\":[],\"ok\":false,\"none\":null,\"inner\":{ \"x\" : \"y\" } } "}) {
    bool done = false;
    EXPECT_EQ(accepted_prefix(*schema, text, &done), text.size()) << text;
    EXPECT_TRUE(done) << text;
  }
}

TEST(JsonSchemaGrammar, RefusesWhatTheSchemaForbids) {
  const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(kSchema));
  EXPECT_EQ(accepted_prefix(*schema, R"({"age": 1})"), 2u);                // keys in schema order
  EXPECT_EQ(accepted_prefix(*schema, R"({"name": 5})"), 9u);               // a string, not a number
  EXPECT_EQ(accepted_prefix(*schema, R"({"name": "x", "age": 1.5})"), 22u);  // integers have no fraction
  EXPECT_EQ(accepted_prefix(*schema, R"({"name": "x", "age": 1})"), 22u);  // '}' before every required one
  EXPECT_EQ(accepted_prefix(*schema, R"({"name": "x", "age": 1, "score": 1, "tags": ["c"])"), 46u);  // enum
  const auto simple = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({"type": "object", "properties": {"a": {"type": "boolean"}}})"));
  EXPECT_EQ(accepted_prefix(*simple, R"({"a": true, "b": 1})"), 10u);  // no extra properties
  EXPECT_EQ(accepted_prefix(*simple, R"({"a": tru)"), 9u);
  bool done = false;
  EXPECT_EQ(accepted_prefix(*simple, R"({"a": false})", &done), 12u);
  EXPECT_TRUE(done);
}

// What pydantic writes for nested models and Optional fields: $defs + $ref, anyOf [T, null],
// and type lists.
TEST(JsonSchemaGrammar, RefsAndOptionalFields) {
  const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({
    "$defs": {"Pet": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}},
    "type": "object",
    "properties": {"pet": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}]},
                   "age": {"type": ["integer", "null"]}, "nick": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
    "required": ["pet", "age", "nick"]})"));
  for (std::string_view text : {R"({"pet": {"kind": "cat"}, "age": 3, "nick": null})",
                                R"({"pet": null, "age": null, "nick": "Tom"})"}) {
    bool done = false;
    EXPECT_EQ(accepted_prefix(*schema, text, &done), text.size()) << text;
    EXPECT_TRUE(done) << text;
  }
  EXPECT_EQ(accepted_prefix(*schema, R"({"pet": [)"), 8u);                    // neither Pet nor null
  EXPECT_EQ(accepted_prefix(*schema, R"({"pet": null, "age": "3")"), 21u);  // neither integer nor null
}

TEST(JsonSchemaGrammar, NamesWhatItDoesNotSupport) {
  auto message = [](const char* schema) {
    try {
      CompiledSchema::compile(nlohmann::ordered_json::parse(schema));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"type": "string", "uniqueItems": true})").find("'uniqueItems' is not supported"), std::string::npos);
  EXPECT_NE(message(R"({"anyOf": [{"type": "string"}, {"enum": ["a"]}]})").find("start alike"), std::string::npos);
  EXPECT_NE(message(R"({"$ref": "#/$defs/Missing"})").find("does not name"), std::string::npos);
  EXPECT_NE(message(R"({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"})").find("recursive"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "date"})").find("'type' must be"), std::string::npos);
  EXPECT_NE(message(R"({"enum": [1, 2]})").find("strings, booleans or null"), std::string::npos);
  EXPECT_NE(message(R"({"type": "array", "items": 3})").find("'items' must be a schema"), std::string::npos);
  EXPECT_NE(message(R"({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]})")
                .find("'required' names \"b\", which is not in 'properties'"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": true})")
                .find("'additionalProperties' other than false beside 'properties'"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "object", "additionalProperties": 5})").find("must be a boolean or a schema"),
            std::string::npos);
  EXPECT_NE(message(R"({"$ref": "#/$defs/A", "type": "string", "$defs": {"A": {"type": "string"}}})")
                .find("'$ref' beside"),
            std::string::npos);
  EXPECT_NE(message(R"({"anyOf": [{"type": "string"}], "type": "string"})").find("'anyOf' beside"), std::string::npos);
  EXPECT_NE(message(R"({"type": "string", "enum": ["a", true]})").find("not of the schema's type"), std::string::npos);
  EXPECT_NE(message(R"({"enum": ["a"], "const": "a"})").find("not both"), std::string::npos);
}

// Properties left out of `required` may be skipped, in order; required ones may not.
TEST(JsonSchemaGrammar, OptionalPropertiesMayBeLeftOut) {
  const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({"type": "object",
      "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"},
                     "ab": {"type": "null"}},
      "required": ["c"], "additionalProperties": false})"));
  for (std::string_view text : {R"({"c": true})", R"({"a": 1, "c": false})", R"({"b": "x", "c": true, "ab": null})",
                                R"({"a": 1, "b": "", "c": true, "ab": null})", R"({"a": 1, "c": true, "ab": null})"}) {
    bool done = false;
    EXPECT_EQ(accepted_prefix(*schema, text, &done), text.size()) << text;
    EXPECT_TRUE(done) << text;
  }
  EXPECT_EQ(accepted_prefix(*schema, R"({})"), 1u);                     // "c" is required
  EXPECT_EQ(accepted_prefix(*schema, R"({"a": 1})"), 7u);               // still required
  EXPECT_EQ(accepted_prefix(*schema, R"({"ab": null, "c": true})"), 3u);  // "ab" comes after "c"
  EXPECT_EQ(accepted_prefix(*schema, R"({"b": "x", "a": 1})"), 12u);     // order kept
  EXPECT_EQ(accepted_prefix(*schema, R"({"c": true, "a": 1})"), 14u);    // "a" before "c" ("ab" may follow)
  EXPECT_EQ(accepted_prefix(*schema, R"({"c": true, "ab": null, )"), 22u);  // nothing after the last one
  EXPECT_EQ(accepted_prefix(*schema, R"({"c": true,})"), 11u);           // no trailing comma
  // With nothing required, {} is a complete value; an absent additionalProperties is false.
  const auto loose = CompiledSchema::compile(nlohmann::ordered_json::parse(
      R"({"type": "object", "properties": {"x": {"type": "string"}}})"));
  bool done = false;
  EXPECT_EQ(accepted_prefix(*loose, "{ }", &done), 3u);
  EXPECT_TRUE(done);
  EXPECT_EQ(accepted_prefix(*loose, R"({"y")"), 2u);
}

// additionalProperties true or a schema, without properties: a map of any keys.
TEST(JsonSchemaGrammar, MapsTakeAnyKey) {
  const auto ints = CompiledSchema::compile(nlohmann::ordered_json::parse(
      R"({"type": "object", "additionalProperties": {"type": "integer"}})"));
  for (std::string_view text : {"{}", R"({"a": 1, "b\"\u00e9": -2, "a": 3})"}) {
    bool done = false;
    EXPECT_EQ(accepted_prefix(*ints, text, &done), text.size()) << text;
    EXPECT_TRUE(done) << text;
  }
  EXPECT_EQ(accepted_prefix(*ints, R"({"a": "1"})"), 6u);
  EXPECT_EQ(accepted_prefix(*ints, R"({"a": 1,})"), 8u);
  const auto any = CompiledSchema::compile(nlohmann::ordered_json::parse(
      R"({"type": "object", "additionalProperties": true})"));
  const std::string_view text = R"({"k": [1, "two", {"x": null, "y": [true, -0.5e3]}], "m": {}})";
  bool done = false;
  EXPECT_EQ(accepted_prefix(*any, text, &done), text.size());
  EXPECT_TRUE(done);
  EXPECT_EQ(accepted_prefix(*any, R"({"k": tru })"), 9u);
  // An array without 'items' and an empty schema take any value too.
  const auto list = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({"type": "array"})"));
  EXPECT_EQ(accepted_prefix(*list, R"([1, "a", [], {"b": false}])"), 26u);
  const auto anything = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({"description": "free"})"));
  EXPECT_EQ(accepted_prefix(*anything, R"("text")", &done), 6u);
  EXPECT_TRUE(done);
}

// A $ref used many times is compiled once, so a schema cannot blow up by nesting references.
TEST(JsonSchemaGrammar, SharedRefsCompileOnce) {
  nlohmann::ordered_json schema = {{"$defs", nlohmann::ordered_json::object()}};
  for (int level = 0; level < 12; ++level) {
    nlohmann::ordered_json props = nlohmann::ordered_json::object();
    for (int k = 0; k < 8; ++k)
      props["p" + std::to_string(k)] =
          level == 0 ? nlohmann::ordered_json{{"type", "string"}}
                     : nlohmann::ordered_json{{"$ref", "#/$defs/L" + std::to_string(level - 1)}};
    schema["$defs"]["L" + std::to_string(level)] = {{"type", "object"}, {"properties", props}};
  }
  schema["$ref"] = "#/$defs/L11";
  const auto compiled = CompiledSchema::compile(schema);
  EXPECT_LT(compiled->nodes.size(), 100u);
}

}  // namespace
}  // namespace strata
