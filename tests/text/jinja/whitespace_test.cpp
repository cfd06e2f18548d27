// Template text, comments and whitespace control (trim_blocks, lstrip_blocks, '-' and '+').
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaWhitespace, PlainText) {
  EXPECT_EQ(render_case("just text"),
            "just text");
}

TEST(JinjaWhitespace, CommentDropped) {
  EXPECT_EQ(render_case("a{# note #}b"),
            "ab");
}

TEST(JinjaWhitespace, TrimBlocksEatsNewline) {
  EXPECT_EQ(render_case("{% if true %}\nyes\n{% endif %}\nend"),
            "yes\nend");
}

TEST(JinjaWhitespace, LstripBlocksIndent) {
  EXPECT_EQ(render_case("<\n    {% if true %}\n    x\n    {% endif %}\n>"),
            "<\n    x\n>");
}

TEST(JinjaWhitespace, MinusStripsBothSides) {
  EXPECT_EQ(render_case("a  \n  {%- if true -%}  \n b \n {%- endif -%}\n  c"),
            "abc");
}

TEST(JinjaWhitespace, VarMinus) {
  EXPECT_EQ(render_case("a \n {{- 'x' -}} \n b"),
            "axb");
}

TEST(JinjaWhitespace, VarNotLstripped) {
  EXPECT_EQ(render_case("a\n    {{ 'x' }}\n"),
            "a\n    x");
}

TEST(JinjaWhitespace, PlusDisablesLstrip) {
  EXPECT_EQ(render_case("a\n    {%+ if true %}x{% endif %}"),
            "a\n    x");
}

TEST(JinjaWhitespace, PlusDisablesTrim) {
  EXPECT_EQ(render_case("{% if true +%}\nx{% endif %}"),
            "\nx");
}

TEST(JinjaWhitespace, TrailingNewlineDropped) {
  EXPECT_EQ(render_case("x\n"),
            "x");
}

TEST(JinjaWhitespace, OnlyOneTrailingNewlineDropped) {
  EXPECT_EQ(render_case("x\n\n"),
            "x\n");
}

TEST(JinjaWhitespace, CrlfNormalised) {
  EXPECT_EQ(render_case("a\r\nb\rc"),
            "a\nb\nc");
}

TEST(JinjaWhitespace, CommentTrimAndLstrip) {
  EXPECT_EQ(render_case("a\n  {# c #}\nb"),
            "a\nb");
}

TEST(JinjaWhitespace, Raw) {
  EXPECT_EQ(render_case("{% raw %}{{ not parsed }}{% endraw %}"),
            "{{ not parsed }}");
}

TEST(JinjaWhitespace, TagEndInString) {
  EXPECT_EQ(render_case("{{ '%}' }}{{ \"}}\" }}"),
            "%}}}");
}

TEST(JinjaWhitespace, DictLiteralInVar) {
  EXPECT_EQ(render_case("{{ {'a': {'b': 1}} }}"),
            "{'a': {'b': 1}}");
}

}  // namespace
}  // namespace strata::jinja
