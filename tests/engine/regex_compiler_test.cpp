// Regexes and choices as automata: exact strings accepted and refused, the byte where a
// wrong string is refused, UTF-8 classes, and errors that name what is wrong.
#include <gtest/gtest.h>

#include "grammar_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/regex_compiler.h"

namespace strata {
namespace {

using test::accepted_prefix;
using test::full_match;

TEST(RegexCompiler, MatchesTheWholeString) {
  const auto g = compile_regex(R"(^\d{3}-[A-Z]{2}(x|yz)?$)");
  for (const char* ok : {"123-AB", "000-ZZx", "999-QAyz"}) EXPECT_TRUE(full_match(*g, ok)) << ok;
  for (const char* bad : {"12-AB", "123-ab", "123-ABy", "123-ABxx", "1234-AB", ""}) EXPECT_FALSE(full_match(*g, bad)) << bad;
  EXPECT_EQ(accepted_prefix(*g, "12a"), 2u);
  EXPECT_EQ(accepted_prefix(*g, "123-ABxq"), 7u);
}

TEST(RegexCompiler, ClassesEscapesAndQuantifiers) {
  EXPECT_TRUE(full_match(*compile_regex(R"(\w+@\w+\.com)"), "a_1@b2.com"));
  EXPECT_FALSE(full_match(*compile_regex(R"(\w+@\w+\.com)"), "a@b.org"));
  EXPECT_TRUE(full_match(*compile_regex(R"([^0-9 ]+\s\S)"), "ab\tc"));
  EXPECT_FALSE(full_match(*compile_regex(R"([^0-9 ]+)"), "a1"));
  EXPECT_TRUE(full_match(*compile_regex("a.c"), "a\xC3\xA9" "c"));  // '.' is one code point, é
  EXPECT_FALSE(full_match(*compile_regex("a.c"), "a\nc"));
  const auto counted = compile_regex("(ab){2,3}c{2,}d{0,1}");
  EXPECT_TRUE(full_match(*counted, "ababcc"));
  EXPECT_TRUE(full_match(*counted, "abababcccd"));
  EXPECT_FALSE(full_match(*counted, "abcc"));
  EXPECT_FALSE(full_match(*counted, "ababababcc"));
  EXPECT_TRUE(full_match(*compile_regex(R"(\x41\u00e9[\-\]]\.\{)"), "A\xC3\xA9]." "{"));
  EXPECT_TRUE(full_match(*compile_regex("x{a}"), "x{a}"));  // a brace that is no count is literal
}

// Nested optionals reach the same parse stack along exponentially many paths; each stack is
// expanded once, so this stays instant (the fuzzer's timeout).
TEST(RegexCompiler, NestedOptionalsStayFast) {
  const auto g = compile_regex("x" + std::string(40, '?') + "{2,8}y");
  EXPECT_TRUE(full_match(*g, "y"));
  EXPECT_TRUE(full_match(*g, "xxxxxxxxy"));
  EXPECT_FALSE(full_match(*g, "xxxxxxxxxy"));
}

TEST(RegexCompiler, UnicodeRanges) {
  const auto g = compile_regex("[à-ÿ]+");  // U+00E0..U+00FF
  EXPECT_TRUE(full_match(*g, "\xC3\xA0\xC3\xBF"));
  EXPECT_FALSE(full_match(*g, "\xC3\x9F"));  // U+00DF
  const auto wide = compile_regex("[\\u0100-\\u4e00]");
  EXPECT_TRUE(full_match(*wide, "\xC4\x80"));      // U+0100
  EXPECT_TRUE(full_match(*wide, "\xE4\xB8\x80"));  // U+4E00
  EXPECT_TRUE(full_match(*wide, "\xE0\xA0\x80"));  // U+0800
  EXPECT_FALSE(full_match(*wide, "\xE4\xB8\x81"));
  EXPECT_FALSE(full_match(*wide, "\xC3\xBF"));
  EXPECT_TRUE(full_match(*compile_regex("[^a]"), "\xF0\x9F\x98\x80"));  // U+1F600
}

TEST(RegexCompiler, Choice) {
  const auto g = compile_choice({"yes", "no", "yesterday"});
  for (const char* ok : {"yes", "no", "yesterday"}) EXPECT_TRUE(full_match(*g, ok));
  for (const char* bad : {"ye", "yess", "No", ""}) EXPECT_FALSE(full_match(*g, bad));
  GrammarState s(g.get());
  ASSERT_TRUE(s.feed("yes"));
  EXPECT_TRUE(s.can_end());
  EXPECT_FALSE(s.done());  // "yesterday" may go on
  ASSERT_TRUE(s.feed("terday"));
  EXPECT_TRUE(s.done());
  EXPECT_THROW(compile_choice({}), Error);
  EXPECT_THROW(compile_choice({"a", ""}), Error);
}

TEST(RegexCompiler, ErrorsNameTheProblem) {
  const auto message = [](const char* pattern) {
    try {
      compile_regex(pattern);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  EXPECT_EQ(message("(ab"), "regex: missing ')' at position 3 of '(ab'");
  EXPECT_EQ(message("ab)"), "regex: unbalanced ')' at position 2 of 'ab)'");
  EXPECT_EQ(message("[a-"), "regex: missing ']' at position 3 of '[a-'");
  EXPECT_EQ(message("*a"), "regex: a quantifier has nothing to repeat at position 0 of '*a'");
  EXPECT_EQ(message("(a)\\1"), "regex: backreferences and word-boundary or anchor escapes are not supported at "
                               "position 5 of '(a)\\1'");
  EXPECT_EQ(message("(?=a)"), "regex: lookaround and inline flags ((?=, (?!, (?<=, (?i) ...) are not supported at "
                              "position 1 of '(?=a)'");
  EXPECT_EQ(message("a^b"), "regex: anchors are only allowed at the start (^) and end ($) at position 1 of 'a^b'");
  EXPECT_EQ(message("[z-a]"), "regex: a character range is out of order at position 4 of '[z-a]'");
  EXPECT_EQ(message("a{3,1}"), "regex: a repetition {3,1} is out of range; bounds go from 0 to 1000 with min <= max");
}

}  // namespace
}  // namespace strata
