// Token masks for JSON objects on the real Qwen3 vocabulary: at the start only tokens that
// open an object; inside a string any text but an unescaped quote-breaking one; every token
// a mask allows keeps the text a valid prefix, and some token always leads on.
#include <gtest/gtest.h>

#include "strata/engine/json_schema_grammar.h"
#include "strata/engine/json_token_mask.h"
#include "engine/token_mask_test_support.h"
#include "text/tokenizer_fixtures.h"

namespace strata {
namespace {

bool allowed(const std::vector<uint32_t>& bits, int32_t id) { return (bits[id / 32] >> (id % 32)) & 1u; }

TEST(JsonTokenMask, AllowsExactlyTheTokensThatKeepAValidPrefix) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  auto id_of = [&](const char* text) {
    const std::vector<int32_t> ids = tokenizer.encode(text, false);
    EXPECT_EQ(ids.size(), 1u) << text;
    return ids.at(0);
  };
  JsonGrammar state;
  std::vector<uint32_t> bits = mask.allowed(state);
  EXPECT_TRUE(allowed(bits, id_of("{")));
  EXPECT_TRUE(allowed(bits, id_of(" {")));
  EXPECT_FALSE(allowed(bits, id_of("[")));
  EXPECT_FALSE(allowed(bits, id_of("hello")));
  ASSERT_TRUE(state.feed(std::string_view(R"({"name": "Al)")));
  bits = mask.allowed(state);
  EXPECT_TRUE(allowed(bits, id_of("ice")));
  EXPECT_TRUE(allowed(bits, id_of("\",")));
  EXPECT_FALSE(allowed(bits, id_of("\n")));  // a raw newline inside a string
  EXPECT_FALSE(allowed(bits, *tokenizer.eos_id()));
  // Brute force over the vocabulary at a few states: the mask is exactly "feed succeeds".
  for (std::string_view prefix : {R"()", R"({"a": [1, 2)", R"({"k": tr)", R"({"x": {"y": -0.)", R"({} )"}) {
    JsonGrammar s;
    ASSERT_TRUE(s.feed(prefix)) << prefix;
    const int64_t count = test::expect_mask_is_brute_force(tokenizer, mask, s, prefix);
    if (!s.done()) {
      EXPECT_GT(count, 0) << prefix;
    }
  }
}

// The same walk with a schema's grammar: at each state exactly the tokens that feed
// (optional properties, so several keys or a '}' may follow; a map of any values).
TEST(JsonTokenMask, SchemaGrammarMasksEqualBruteForce) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  const std::pair<const char*, std::vector<std::string_view>> cases[] = {
      {R"({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"},
          "mood": {"enum": ["happy", "sad"]}}, "required": ["n"]})",
       {R"()", R"({"na)", R"({"name": "x", "n": 4)", R"({"name": "x", "n": 4, "mood": "h)"}},
      {R"({"type": "object", "additionalProperties": true})", {R"({"k": [1, {"j)", R"({"k": 1, )"}},
  };
  for (const auto& [text, prefixes] : cases) {
    const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(text));
    for (std::string_view prefix : prefixes) {
      JsonSchemaGrammar state(schema.get());
      ASSERT_TRUE(state.feed(prefix)) << prefix;
      EXPECT_GT(test::expect_mask_is_brute_force(tokenizer, mask, state, prefix), 0) << prefix;
    }
  }
}

}  // namespace
}  // namespace strata
