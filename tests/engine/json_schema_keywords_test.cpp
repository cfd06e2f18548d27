// The bounding keywords of json_schema: string lengths, pattern and format, integer bounds
// exact, number sign and digit limits, item counts, and recursive $ref; each checked on
// exact documents (the byte where a wrong one is refused), and the errors that name misuse.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/engine/json_schema_grammar.h"

namespace strata {
namespace {

std::shared_ptr<const CompiledSchema> compile(const char* schema) {
  return CompiledSchema::compile(nlohmann::ordered_json::parse(schema));
}

// Bytes taken before the first refusal; `done` says whether the value completed.
size_t accepted_prefix(const CompiledSchema& schema, std::string_view text, bool* done = nullptr) {
  JsonSchemaGrammar g(&schema);
  size_t i = 0;
  while (i < text.size() && g.feed(static_cast<unsigned char>(text[i]))) ++i;
  if (done != nullptr) *done = g.done();
  return i;
}

bool accepts(const CompiledSchema& schema, std::string_view text) {
  bool done = false;
  return accepted_prefix(schema, text, &done) == text.size() && done;
}

TEST(JsonSchemaKeywords, StringLengths) {
  const auto s = compile(R"({"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 3}})");
  EXPECT_TRUE(accepts(*s, R"(["ab", "abc", "\n\u00e9", "é€x"])"));
  EXPECT_EQ(accepted_prefix(*s, R"(["a"])"), 3u);     // too short to close
  EXPECT_EQ(accepted_prefix(*s, R"(["abcd"])"), 5u);  // the fourth character is refused
}

TEST(JsonSchemaKeywords, PatternAndFormats) {
  const auto s = compile(R"({"type": "object", "properties": {
      "code": {"type": "string", "pattern": "^[A-Z]{2}-\\d+$"}, "day": {"type": "string", "format": "date"},
      "at": {"type": "string", "format": "date-time"}, "id": {"type": "string", "format": "uuid"},
      "mail": {"type": "string", "format": "email"}, "ip": {"type": "string", "format": "ipv4"},
      "t": {"type": "string", "format": "time"}, "q": {"type": "string", "pattern": "a\"b\\\\c"}},
    "required": ["code", "day", "at", "id", "mail", "ip", "t", "q"]})");
  const std::string good = R"({"code": "AB-12", "day": "2024-02-29", "at": "2024-12-05T10:30:00.5+01:00", )"
                           R"("id": "123e4567-e89b-12d3-a456-426614174000", "mail": "a.b+c@ex-ample.co.uk", )"
                           R"("ip": "192.168.0.255", "t": "23:59:59Z", "q": "a\"b\\c"})";
  EXPECT_TRUE(accepts(*s, good));
  EXPECT_EQ(accepted_prefix(*s, R"({"code": "A1)"), 11u);
  EXPECT_EQ(accepted_prefix(*s, R"({"code": "AB-"})"), 13u);  // the pattern may not end yet
  EXPECT_EQ(accepted_prefix(*s, R"({"code": "AB-1", "day": "2024-13)"), 31u);
  const auto ip = compile(R"({"type": "string", "format": "ipv4"})");
  EXPECT_TRUE(accepts(*ip, R"("0.0.0.0")"));
  EXPECT_EQ(accepted_prefix(*ip, R"("256.1.1.1")"), 3u);
  EXPECT_EQ(accepted_prefix(*ip, R"("1.2.3")"), 6u);
}

TEST(JsonSchemaKeywords, IntegerBoundsAreExact) {
  const auto s = compile(R"({"type": "array", "items": {"type": "integer", "minimum": -5, "exclusiveMaximum": 120}})");
  EXPECT_TRUE(accepts(*s, "[-5, 0, 7, 119, -0]"));
  EXPECT_EQ(accepted_prefix(*s, "[-6"), 2u);
  EXPECT_EQ(accepted_prefix(*s, "[120"), 3u);   // 12 may become 12x <= 119, but 120 may not
  EXPECT_EQ(accepted_prefix(*s, "[1190"), 4u);  // no fourth digit
  EXPECT_EQ(accepted_prefix(*s, "[00"), 2u);
  const auto big = compile(R"({"type": "integer", "minimum": 10, "maximum": 20})");
  EXPECT_EQ(accepted_prefix(*big, "1 "), 1u);  // 1 may not end: below 10
  EXPECT_EQ(accepted_prefix(*big, "-"), 0u);
  const auto free = compile(R"({"type": "array", "items": {"type": "integer"}})");
  EXPECT_TRUE(accepts(*free, "[1234567890123456, -9999999999999999]"));
  EXPECT_EQ(accepted_prefix(*free, "[12345678901234567"), 17u);  // 16 digits at most
}

TEST(JsonSchemaKeywords, NumberSignAndDigits) {
  const auto s = compile(R"({"type": "array", "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5}})");
  EXPECT_TRUE(accepts(*s, "[0.5, 1, 2.25, 2.99]"));  // 2.99: the fraction is not compared
  EXPECT_EQ(accepted_prefix(*s, "[-"), 1u);
  EXPECT_EQ(accepted_prefix(*s, "[3"), 1u);
  EXPECT_EQ(accepted_prefix(*s, "[1e"), 2u);  // no exponent under bounds
  const auto free = compile(R"({"type": "array", "items": {"type": "number"}})");
  EXPECT_TRUE(accepts(*free, "[1.5e-300, 0.1234567890123456]"));
  EXPECT_EQ(accepted_prefix(*free, "[0.12345678901234567"), 19u);  // 16 fraction digits at most
  EXPECT_EQ(accepted_prefix(*free, "[1e1234"), 6u);
}

TEST(JsonSchemaKeywords, ItemCounts) {
  const auto s = compile(R"({"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 2})");
  EXPECT_TRUE(accepts(*s, "[true]"));
  EXPECT_TRUE(accepts(*s, "[true, false]"));
  EXPECT_EQ(accepted_prefix(*s, "[]"), 1u);
  EXPECT_EQ(accepted_prefix(*s, "[true, false,"), 12u);
  const auto none = compile(R"({"type": "array", "maxItems": 0})");
  EXPECT_TRUE(accepts(*none, "[ ]"));
  EXPECT_EQ(accepted_prefix(*none, "[1"), 1u);
}

// Pydantic's recursive models: a $ref into $defs from inside itself, and "#".
TEST(JsonSchemaKeywords, RecursiveRefs) {
  const auto tree = compile(R"({"$defs": {"Node": {"type": "object", "properties": {
      "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
      "required": ["name", "children"]}}, "$ref": "#/$defs/Node"})");
  EXPECT_TRUE(accepts(*tree, R"({"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]})"));
  EXPECT_EQ(accepted_prefix(*tree, R"({"name": "a", "children": [{"children")"), 29u);
  const auto list = compile(R"({"type": "object", "properties": {"v": {"type": "integer"},
      "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["v", "next"]})");
  EXPECT_TRUE(accepts(*list, R"({"v": 1, "next": {"v": 2, "next": null}})"));
  EXPECT_EQ(accepted_prefix(*list, R"({"v": 1, "next": 3)"), 17u);
}

// Between tokens: 2 spaces, or one line break ("\n", "\r\n") and 4 spaces of indentation per
// open level, then no more.
TEST(JsonSchemaKeywords, WhitespaceIsBounded) {
  const auto s = compile(R"({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
      "required": ["a"]})");
  EXPECT_TRUE(accepts(*s, "{\r\n        \"a\": [\n            1 ,  2\n        ]\n} \n"));
  EXPECT_EQ(accepted_prefix(*s, "{\n\n"), 2u);
  EXPECT_EQ(accepted_prefix(*s, "{         "), 3u);  // no break: 2 spaces
  EXPECT_EQ(accepted_prefix(*s, "{\n         "), 10u);  // indentation inside one object: 8
  EXPECT_EQ(accepted_prefix(*s, "{\"a\": [1\n\n"), 9u);
}

TEST(JsonSchemaKeywords, ErrorsNameTheMisuse) {
  const auto message = [](const char* schema) {
    try {
      compile(schema);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(R"({"type": "integer", "minLength": 1})"),
            "json_schema: 'minLength' needs \"type\": \"string\" in the same schema (a list of types or no type is not "
            "supported with it; use anyOf)");
  EXPECT_EQ(message(R"({"type": "string", "format": "hostname"})"),
            "json_schema: format 'hostname' is not supported; supported formats: date, time, date-time, uuid, email, ipv4");
  EXPECT_EQ(message(R"({"type": "string", "pattern": "(a"})"),
            "json_schema pattern: missing ')' at position 2 of '(a'");
  EXPECT_EQ(message(R"({"type": "integer", "minimum": 5, "maximum": 4})"),
            "json_schema: no integer lies within the schema's minimum and maximum");
  EXPECT_EQ(message(R"({"type": "array", "minItems": 3, "maxItems": 2})"), "json_schema: minItems 3 is above maxItems 2");
  EXPECT_EQ(message(R"({"type": "integer", "exclusiveMinimum": true})"),
            "json_schema: 'exclusiveMinimum' must be a number (draft 2020-12; the boolean exclusiveMinimum of draft 4 "
            "is not supported), got true");
  EXPECT_EQ(message(R"({"enum": ["a"], "maxLength": 1})"),
            "json_schema: 'maxLength' beside enum or const is not supported; the listed values are the only ones");
}

}  // namespace
}  // namespace strata
