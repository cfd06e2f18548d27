// The schema recogniser behind response_format json_schema: documents of the schema's shape
// (every property, in order) complete; wrong keys, types, enum values and extra or missing
// properties are refused at their first byte; unsupported keywords are named.
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
  EXPECT_EQ(accepted_prefix(*schema, R"({"name": "x", "age": 1})"), 22u);  // '}' before every property
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
  EXPECT_NE(message(R"({"type": "string", "minLength": 3})").find("'minLength' is not supported"), std::string::npos);
  EXPECT_NE(message(R"({"anyOf": [{"type": "string"}, {"enum": ["a"]}]})").find("start alike"), std::string::npos);
  EXPECT_NE(message(R"({"$ref": "#/$defs/Missing"})").find("does not name"), std::string::npos);
  EXPECT_NE(message(R"({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"})").find("recursive"),
            std::string::npos);
  EXPECT_NE(message(R"({"type": "date"})").find("'type' must be"), std::string::npos);
  EXPECT_NE(message(R"({"enum": [1, 2]})").find("strings, booleans or null"), std::string::npos);
  EXPECT_NE(message(R"({"type": "array"})").find("needs 'items'"), std::string::npos);
}

}  // namespace
}  // namespace strata
