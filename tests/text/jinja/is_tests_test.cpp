// Builtin tests (`is defined`, `is string`, ...).
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaTests, TypeTests) {
  EXPECT_EQ(render_case("{% for v in [1, 1.5, 'a', [1], {'a': 1}, none, true, nope] %}{{ v is number }}{{ v is integer }}{{ v is float }}{{ v is string }}{{ v is mapping }}{{ v is sequence }}{{ v is iterable }}{{ v is boolean }}{{ v is none }}{{ v is defined }}|{% endfor %}"),
            "TrueTrueFalseFalseFalseFalseFalseFalseFalseTrue|TrueFalseTrueFalseFalseFalseFalseFalseFalseTrue|FalseFalseFalseTrueFalseTrueTrueFalseFalseTrue|FalseFalseFalseFalseFalseTrueTrueFalseFalseTrue|FalseFalseFalseFalseTrueTrueTrueFalseFalseTrue|FalseFalseFalseFalseFalseFalseFalseFalseTrueTrue|TrueFalseFalseFalseFalseFalseFalseTrueFalseTrue|FalseFalseFalseFalseFalseTrueTrueFalseFalseFalse|");
}

TEST(JinjaTests, ValueTests) {
  EXPECT_EQ(render_case("{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 2 is in [1, 2] }} {{ 'a' is equalto 'a' }} {{ 1 is eq 2 }} {{ 3 is gt 2 }} {{ 3 is ge 4 }} {{ 3 is lt 4 }} {{ 3 is le 2 }} {{ 3 is ne 3 }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ none is sameas none }} {{ range is callable }}"),
            "True False True False True True True True True False True False True False False True True True True");
}

TEST(JinjaTests, NegatedTests) {
  EXPECT_EQ(render_case("{{ n is not none }} {{ s is not string }} {{ nope is not defined }} {{ not nope is defined }}"),
            "False False True True");
}

}  // namespace
}  // namespace strata::jinja
