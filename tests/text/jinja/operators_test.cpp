// Operators with Python semantics and jinja2 precedence.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaOperators, Arithmetic) {
  EXPECT_EQ(render_case("{{ 7 + 2 }} {{ 7 - 9 }} {{ 3 * 4 }} {{ 7 / 2 }} {{ 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 10 }} {{ 2 ** 3 ** 2 }} {{ 1.5 + 1 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}"),
            "9 -2 12 3.5 2.0 3 -4 1 2 1024 64 2.5 3.0 0.5");
}

TEST(JinjaOperators, Precedence) {
  EXPECT_EQ(render_case("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ -2 ** 2 }} {{ l|length - 1 }} {{ (1 + 2) ~ 3 }} {{ 2 * 3 ~ 4 }}"),
            "7 9 4 2 33 64");
}

TEST(JinjaOperators, StringOps) {
  EXPECT_EQ(render_case("{{ 'a' + 'b' }} {{ 'ab' * 3 }} {{ 1 ~ 'x' ~ none ~ n }} {{ [1] + [2] }} {{ [0] * 3 }}"),
            "ab ababab 1xNoneNone [1, 2] [0, 0, 0]");
}

TEST(JinjaOperators, Comparisons) {
  EXPECT_EQ(render_case("{{ 1 == 1.0 }} {{ true == 1 }} {{ 'a' < 'b' }} {{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 2 >= 2 }} {{ 1 != 2 }} {{ [1, 2] == [1, 2] }} {{ d == {'a': 1, 'b': 2} }} {{ n == none }}"),
            "True True True True False True True True True True");
}

TEST(JinjaOperators, Logic) {
  EXPECT_EQ(render_case("{{ true and 'x' }} {{ 0 or 'y' }} {{ '' or 0 }} {{ not 0 }} {{ not [] }} {{ not 'a' }} {{ 1 and 0 or 5 }}"),
            "x y 0 True True False 5");
}

TEST(JinjaOperators, In) {
  EXPECT_EQ(render_case("{{ 'ell' in s }} {{ 'a' in d }} {{ 'z' not in d }} {{ 3 in l }} {{ 4 in l }} {{ 'x' in nope|default([]) }}"),
            "True True True True False False");
}

TEST(JinjaOperators, Conditional) {
  EXPECT_EQ(render_case("{{ 'y' if t else 'n' }} {{ 'y' if n else 'n' }} [{{ 'y' if n }}] {{ 'a' if false else 'b' if true else 'c' }}"),
            "y n [] b");
}

TEST(JinjaOperators, Truthiness) {
  EXPECT_EQ(render_case("{% for v in [0, 1, 0.0, '', 'a', [], [0], {}, none, true, false] %}{{ 'T' if v else 'F' }}{% endfor %}"),
            "FTFFTFTFFTF");
}

}  // namespace
}  // namespace strata::jinja
