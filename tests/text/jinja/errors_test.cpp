// Syntax and runtime errors are strata::Error naming the template line and column; runaway
// templates (deep macro recursion, huge output, huge ranges, endless loops) stop with an error.
#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

std::string error_of(const std::string& source, const RenderOptions& options = {}) {
  try {
    Template::parse(source).render(test_context(), options);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(JinjaErrors, SyntaxErrorsCarryLineAndColumn) {
  EXPECT_EQ(error_of("a\nb {{ x"), "template line 2, column 3: '{{' is never closed with '}}'");
  EXPECT_EQ(error_of("{% if x %}\n\nyes"),
            "template line 3, column 4: syntax error: unexpected end of template: the 'if' "
            "block needs 'elif' or 'else' or 'endif'");
  EXPECT_EQ(error_of("\n  {% endfor %}"), "template line 2, column 6: syntax error: unknown tag 'endfor'");
  EXPECT_EQ(error_of("{% foo %}"), "template line 1, column 4: syntax error: unknown tag 'foo'");
  EXPECT_EQ(error_of("{{ 'abc }}"), "template line 1, column 4: string literal is never closed");
  EXPECT_EQ(error_of("{{ 1 + }}"), "template line 1, column 8: syntax error: unexpected '}}'");
  EXPECT_EQ(error_of("{{ (1 }}"), "template line 1, column 7: unexpected '}'");
  EXPECT_EQ(error_of("{{ a ) }}"), "template line 1, column 6: unexpected ')'");
  EXPECT_EQ(error_of("{# open"), "template line 1, column 1: comment '{#' is never closed with '#}'");
  EXPECT_EQ(error_of("{% for x in l %}{% endif %}"),
            "template line 1, column 20: syntax error: unknown tag 'endif'");
  EXPECT_EQ(error_of("{% break %}"),
            "template line 1, column 4: syntax error: 'break' outside of a for loop");
  EXPECT_EQ(error_of("{{ x $ y }}"), "template line 1, column 6: unexpected character '$' inside a tag");
}

TEST(JinjaErrors, RuntimeErrorsCarryLineAndColumn) {
  EXPECT_EQ(error_of("ok\n{{ nope.x }}"), "template line 2, column 8: 'nope' is undefined");
  EXPECT_EQ(error_of("{{ d.zz.y }}"), "template line 1, column 8: 'dict object' has no attribute 'zz'");
  EXPECT_EQ(error_of("{{ 1 + 'a' }}"),
            "template line 1, column 6: unsupported operand type(s) for +: 'int' and 'str'");
  EXPECT_EQ(error_of("{{ nope + 1 }}"), "template line 1, column 9: 'nope' is undefined");
  EXPECT_EQ(error_of("{{ nope() }}"), "template line 1, column 4: 'nope' is undefined");
  EXPECT_EQ(error_of("{{ s() }}"), "template line 1, column 4: 'str' object is not callable");
  EXPECT_EQ(error_of("{{ l|nofilter }}"), "template line 1, column 6: no filter named 'nofilter'");
  EXPECT_EQ(error_of("{{ l is notest }}"), "template line 1, column 6: no test named 'notest'");
  EXPECT_EQ(error_of("\n\n{% for x in 5 %}{% endfor %}"),
            "template line 3, column 4: 'int' object is not iterable");
  EXPECT_EQ(error_of("{{ 1 // 0 }}"), "template line 1, column 6: integer division or modulo by zero");
  EXPECT_EQ(error_of("{{ n|tojson }}{{ nope|tojson }}"),
            "template line 1, column 23: Object of type Undefined is not JSON serializable");
  EXPECT_EQ(error_of("{% set x = 1 %}{% set x.a = 2 %}"),
            "template line 1, column 19: cannot assign attribute on non-namespace object 'x'");
  EXPECT_EQ(error_of("{% for a, b in [[1, 2, 3]] %}{% endfor %}"),
            "template line 1, column 4: cannot unpack 3 values into 2 names");
  EXPECT_EQ(error_of("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
            "template line 1, column 34: macro 'm' takes not more than 1 argument(s)");
  EXPECT_EQ(error_of("{{ l.append(4) }}"), "template line 1, column 5: 'list object' has no attribute 'append'");
  EXPECT_EQ(error_of("{{ raise_exception('bad role') }}"),
            "template line 1, column 4: raise_exception: bad role");
}

TEST(JinjaErrors, MacroRecursionIsBounded) {
  EXPECT_EQ(error_of("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
            "template line 1, column 20: macro 'f' recursed deeper than 100 calls");
}

TEST(JinjaErrors, OutputSizeIsBounded) {
  RenderOptions options;
  options.limits.max_output_bytes = 1000;
  EXPECT_EQ(error_of("{% for i in range(2000) %}x{% endfor %}", options),
            "template line 1, column 27: template output exceeds 1000 bytes");
}

TEST(JinjaErrors, LoopIterationsAreBounded) {
  RenderOptions options;
  options.limits.max_loop_iterations = 1000;
  EXPECT_EQ(error_of("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}",
                     options),
            "template line 1, column 29: template loops ran more than 1000 iterations");
}

TEST(JinjaErrors, RangeIsBoundedLikeTheSandbox) {
  EXPECT_EQ(error_of("{{ range(200000)|length }}"),
            "template line 1, column 4: range too big: 200000 items, the limit is 100000");
}

TEST(JinjaErrors, DeepNestingIsASyntaxErrorNotACrash) {
  const std::string deep = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  EXPECT_NE(error_of(deep).find("expression nested deeper than 200 levels"), std::string::npos);
  const std::string deep_list = "{{ " + std::string(5000, '[') + std::string(5000, ']') + " }}";
  EXPECT_NE(error_of(deep_list).find("expression nested deeper than 200 levels"), std::string::npos);
}

TEST(JinjaErrors, TemplateIsReusable) {
  const Template t = Template::parse("{{ greeting }}, {{ name|default('you') }}");
  EXPECT_EQ(t.render({{"greeting", "Hi"}}), "Hi, you");
  EXPECT_EQ(t.render({{"greeting", "Yo"}, {"name", "Ann"}}), "Yo, Ann");
  EXPECT_EQ(render("{{ 1 + 1 }}", nlohmann::ordered_json::object()), "2");
}

}  // namespace
}  // namespace strata::jinja
