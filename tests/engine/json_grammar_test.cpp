// The JSON-object recogniser behind response_format json_object: valid documents feed to
// the end and complete; each kind of error is refused at the byte where it appears.
#include <gtest/gtest.h>

#include "strata/engine/json_grammar.h"

namespace strata {
namespace {

// The number of bytes fed before the first refused one (the whole length when none is).
size_t accepted_prefix(std::string_view text, bool* done = nullptr) {
  JsonGrammar g;
  size_t i = 0;
  while (i < text.size() && g.feed(static_cast<unsigned char>(text[i]))) ++i;
  if (done != nullptr) *done = g.done();
  return i;
}

TEST(JsonGrammar, ValidObjectsComplete) {
  for (std::string_view text : {R"({})", R"( {"a": 1} )", R"({"a":[1,2.5,-3e+4,0.0,true,false,null,"x"]})",
                                R"({"nested": {"k": [{}, [], [[]], {"z": "\"\\\/\b\f\n\r\tAé"}]}, "u": "\u00e9"})",
                                "{\"n\": 0, \"m\": -0.5E-3}\n"}) {
    bool done = false;
    EXPECT_EQ(accepted_prefix(text, &done), text.size()) << text;
    EXPECT_TRUE(done) << text;
  }
  bool done = true;
  EXPECT_EQ(accepted_prefix(R"({"a": [1, 2)", &done), 11u);
  EXPECT_FALSE(done);  // a valid prefix, not yet an object
}

TEST(JsonGrammar, RefusesAtTheFirstBadByte) {
  EXPECT_EQ(accepted_prefix("[1]"), 0u);           // the top level is an object
  EXPECT_EQ(accepted_prefix(R"({a: 1})"), 1u);     // keys are strings
  EXPECT_EQ(accepted_prefix(R"({"a" 1})"), 5u);    // the colon
  EXPECT_EQ(accepted_prefix(R"({"a": 01})"), 7u);  // no leading zeros
  EXPECT_EQ(accepted_prefix(R"({"a": 1.})"), 8u);  // a fraction needs digits
  EXPECT_EQ(accepted_prefix(R"({"a": tru})"), 9u);
  EXPECT_EQ(accepted_prefix(R"({"a": 1,})"), 8u);  // no trailing comma
  EXPECT_EQ(accepted_prefix(R"({"a": "\x"})"), 8u);
  EXPECT_EQ(accepted_prefix("{\"a\": \"\n\"}"), 7u);  // raw control characters
  EXPECT_EQ(accepted_prefix(R"({"a": 1]})"), 7u);     // mismatched bracket
  EXPECT_EQ(accepted_prefix(R"({} x)"), 3u);          // nothing after the object
  JsonGrammar g;
  EXPECT_TRUE(g.feed(std::string_view(R"({"k": )")));
  EXPECT_FALSE(g.feed(std::string_view("1}x")));  // all or nothing
  EXPECT_TRUE(g.feed(std::string_view("1}")));
  EXPECT_TRUE(g.done());
}

}  // namespace
}  // namespace strata
