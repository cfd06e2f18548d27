// Statements: if, for (loop variables, filter, else, unpacking), set, namespace, macro, call, filter, loop controls.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaStatements, IfElifElse) {
  EXPECT_EQ(render_case("{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %},{% endfor %}"),
            "one,two,many,");
}

TEST(JinjaStatements, ForLoopVariables) {
  EXPECT_EQ(render_case("{% for x in l %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}|{% endfor %}"),
            "1032TrueFalse3|2121FalseFalse3|3210FalseTrue3|");
}

TEST(JinjaStatements, ForPrevNext) {
  EXPECT_EQ(render_case("{% for x in l %}{{ loop.previtem|default('-') }}{{ x }}{{ loop.nextitem|default('-') }} {% endfor %}"),
            "-31 312 12- ");
}

TEST(JinjaStatements, ForElse) {
  EXPECT_EQ(render_case("{% for x in e %}x{% else %}empty{% endfor %}{% for x in l %}{{ x }}{% else %}empty{% endfor %}"),
            "empty312");
}

TEST(JinjaStatements, ForFilter) {
  EXPECT_EQ(render_case("{% for x in l if x > 1 %}{{ x }}/{{ loop.index }}/{{ loop.length }} {% endfor %}"),
            "3/1/2 2/2/2 ");
}

TEST(JinjaStatements, ForUnpack) {
  EXPECT_EQ(render_case("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }} {% endfor %}{% for (a, b) in [(5, 6)] %}{{ a * b }}{% endfor %}"),
            "3 7 30");
}

TEST(JinjaStatements, ForString) {
  EXPECT_EQ(render_case("{% for c in 'ab' %}[{{ c }}]{% endfor %}"),
            "[a][b]");
}

TEST(JinjaStatements, NestedLoops) {
  EXPECT_EQ(render_case("{% for a in [1, 2] %}{% for b in 'xy' %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{{ loop.index }};{% endfor %}"),
            "11x 21y 1;12x 22y 2;");
}

TEST(JinjaStatements, LoopCycle) {
  EXPECT_EQ(render_case("{% for x in l %}{{ loop.cycle('odd', 'even') }} {% endfor %}"),
            "odd even odd ");
}

TEST(JinjaStatements, BreakContinue) {
  EXPECT_EQ(render_case("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x > 4 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "0134");
}

TEST(JinjaStatements, SetScoping) {
  EXPECT_EQ(render_case("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}{{ x }}{% if true %}{% set x = 5 %}{% endif %}{{ x }}"),
            "2315");
}

TEST(JinjaStatements, SetTuple) {
  EXPECT_EQ(render_case("{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 3, 4 %}{{ c }}"),
            "12(3, 4)");
}

TEST(JinjaStatements, Namespace) {
  EXPECT_EQ(render_case("{% set ns = namespace(count=0, found=false) %}{% for m in msgs %}{% if m.role == 'user' %}{% set ns.count = ns.count + 1 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.count }} {{ ns.found }}"),
            "2 True");
}

TEST(JinjaStatements, BlockSet) {
  EXPECT_EQ(render_case("{% set block %}a{{ 1 + 1 }}b{% endset %}[{{ block }}]{{ block|length }}"),
            "[a2b]3");
}

TEST(JinjaStatements, Macro) {
  EXPECT_EQ(render_case("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }}"),
            "Hi A! Hi B? Hi C.");
}

TEST(JinjaStatements, MacroRecursion) {
  EXPECT_EQ(render_case("{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}"),
            "120");
}

TEST(JinjaStatements, CallBlock) {
  EXPECT_EQ(render_case("{% macro box(title) %}[{{ title }}:{{ caller() }}]{% endmacro %}{% call box('t') %}inside {{ 1 + 1 }}{% endcall %}"),
            "[t:inside 2]");
}

TEST(JinjaStatements, CallBlockArgs) {
  EXPECT_EQ(render_case("{% macro each(items) %}{% for i in items %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(x) each([1, 2]) %}<{{ x }}>{% endcall %}"),
            "<1><2>");
}

TEST(JinjaStatements, FilterBlock) {
  EXPECT_EQ(render_case("{% filter upper %}hello {{ 'x' }}{% endfilter %}|{% filter trim|upper %}  ab  {% endfilter %}"),
            "HELLO X|AB");
}

TEST(JinjaStatements, Generation) {
  EXPECT_EQ(render_case("{% generation %}kept{% endgeneration %}"),
            "kept");
}

TEST(JinjaStatements, MessagesReversed) {
  EXPECT_EQ(render_case("{% for m in msgs[::-1] %}{{ (msgs|length - 1) - loop.index0 }}{{ m.role[0] }}{% endfor %}"),
            "2u1a0u");
}

}  // namespace
}  // namespace strata::jinja
