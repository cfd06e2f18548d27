// Literal syntax: strings with escapes, numbers printed as Python prints them, collections.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaLiterals, Strings) {
  EXPECT_EQ(render_case("{{ 'a\\'b' }}|{{ \"c\\\"d\" }}|{{ 'x\\ny' }}|{{ '\\t' }}|{{ '\\u00e9\\x41' }}|{{ 'a' 'b' }}|{{ '\\q' }}"),
            "a'b|c\"d|x\ny|\t|\xc3""\xa9""A|ab|\\q");
}

TEST(JinjaLiterals, Numbers) {
  EXPECT_EQ(render_case("{{ 1 }} {{ 1.0 }} {{ 1.50 }} {{ 1e3 }} {{ 1_000 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e-5 }} {{ 2.5e-3 }} {{ 123456789012345678.0 }}"),
            "1 1.0 1.5 1000.0 1000 0.30000000000000004 1e+16 1e-05 0.0025 1.2345678901234568e+17");
}

TEST(JinjaLiterals, Constants) {
  EXPECT_EQ(render_case("{{ true }} {{ True }} {{ false }} {{ none }} {{ None }}"),
            "True True False None None");
}

TEST(JinjaLiterals, Collections) {
  EXPECT_EQ(render_case("{{ [1, 'a', none, true, 1.5] }} {{ (1, 2) }} {{ (1,) }} {{ () }} {{ {'k': 'v', 'n': [1]} }} {{ [] }} {{ {} }}"),
            "[1, 'a', None, True, 1.5] (1, 2) (1,) () {'k': 'v', 'n': [1]} [] {}");
}

TEST(JinjaLiterals, ReprQuotes) {
  EXPECT_EQ(render_case("{{ [\"it's\", 'say \"hi\"', 'both \\' \"'] }}"),
            "[\"it's\", 'say \"hi\"', 'both \\' \"']");
}

}  // namespace
}  // namespace strata::jinja
