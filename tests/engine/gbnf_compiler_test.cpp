// GBNF grammars: llama.cpp's syntax (rules, alternation, groups, * + ? {m,n}, classes,
// literals, escapes, comments, free layout), recursion, and the errors that refuse
// undefined rules, left recursion and grammars with no finite sentence.
#include <gtest/gtest.h>

#include "grammar_test_support.h"
#include "strata/core/error.h"
#include "strata/engine/gbnf_compiler.h"

namespace strata {
namespace {

using test::accepted_prefix;
using test::full_match;

// A small arithmetic language: nested parentheses need the stack.
const char* kArithmetic = R"G(
root ::= expr            # the start
expr ::= term (("+" | "-") term)*
term ::= num | "(" expr ")"
num  ::= [1-9] [0-9]{0,2} | "0"
)G";

TEST(GbnfCompiler, RecursiveRules) {
  const auto g = compile_gbnf(kArithmetic);
  for (const char* ok : {"0", "1+2", "(1-(20+300))", "((((7))))-999"}) EXPECT_TRUE(full_match(*g, ok)) << ok;
  for (const char* bad : {"", "01", "1000", "(1+2", "1+", "()"}) EXPECT_FALSE(full_match(*g, bad)) << bad;
  EXPECT_EQ(accepted_prefix(*g, "(1+2))"), 5u);
  EXPECT_EQ(accepted_prefix(*g, "12a"), 2u);
}

TEST(GbnfCompiler, LiteralsClassesAndEscapes) {
  const auto g = compile_gbnf(R"(root ::= "say \"hi\"\n" [^\x00-\x1f"]* "\u00e9" [a-c\]]+ .)");
  EXPECT_TRUE(full_match(*g, "say \"hi\"\nany text \xC3\xA9" "ab]c!"));
  EXPECT_TRUE(full_match(*g, "say \"hi\"\n\xC3\xA9" "a\xE2\x82\xAC"));  // '.' takes the euro sign
  EXPECT_FALSE(full_match(*g, "say \"hi\"\n\"\xC3\xA9" "a!"));
  const auto counted = compile_gbnf("root ::= (\"ab\"){2} \"c\"{1,} \"d\"?");
  EXPECT_TRUE(full_match(*counted, "ababccc"));
  EXPECT_TRUE(full_match(*counted, "ababcd"));
  EXPECT_FALSE(full_match(*counted, "abcd"));
  const auto layout = compile_gbnf("root ::=\n  a\n  | b\nb ::= \"b\" a\na ::= \"a\"");
  EXPECT_TRUE(full_match(*layout, "a"));
  EXPECT_TRUE(full_match(*layout, "ba"));
  EXPECT_FALSE(full_match(*layout, "b"));
}

TEST(GbnfCompiler, DoneWhenNothingMayFollow) {
  const auto g = compile_gbnf(R"(root ::= "yes" | "no" "!"?)");
  GrammarState s(g.get());
  ASSERT_TRUE(s.feed("no"));
  EXPECT_TRUE(s.can_end());
  EXPECT_FALSE(s.done());
  ASSERT_TRUE(s.feed("!"));
  EXPECT_TRUE(s.done());
}

TEST(GbnfCompiler, ErrorsNameTheProblem) {
  const auto message = [](const char* grammar) {
    try {
      compile_gbnf(grammar);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("compiled");
  };
  EXPECT_EQ(message("root ::= a"), "grammar: rule 'a' is used but never defined");
  EXPECT_EQ(message("start ::= \"a\""), "grammar: there is no 'root' rule; the grammar starts at `root ::= ...`");
  EXPECT_EQ(message("root ::= root \"a\" | \"b\""),
            "grammar: rule 'root' is left-recursive (it can reach itself before reading a character); rewrite it "
            "with repetition, e.g. list ::= item (\",\" item)*");
  EXPECT_EQ(message("root ::= \"a\" root"),
            "grammar: rule 'root' accepts no finite string (every alternative recurses forever); give it an "
            "alternative that ends");
  EXPECT_EQ(message("root ::= \"a"), "grammar: a string literal is not closed at line 1 column 12");
  EXPECT_EQ(message("root ::= (\"a\"\n"), "grammar: missing ')' at line 2 column 1");
  EXPECT_EQ(message("root ::= \"a\" @"), "grammar: unexpected character '@' at line 1 column 14");
  EXPECT_EQ(message("root ::= \"a\"\nroot ::= \"b\""), "grammar: rule 'root' is defined twice at line 2 column 9");
  EXPECT_EQ(message(""), "grammar: the grammar is empty; it needs at least `root ::= ...`");
}

}  // namespace
}  // namespace strata
