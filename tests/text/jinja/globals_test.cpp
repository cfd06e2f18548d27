// Globals: range, dict, namespace.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaGlobals, Range) {
  EXPECT_EQ(render_case("{{ range(3)|list }} {{ range(1, 4)|list }} {{ range(10, 0, -3)|list }} {{ range(0)|list }}"),
            "[0, 1, 2] [1, 2, 3] [10, 7, 4, 1] []");
}

TEST(JinjaGlobals, DictAndNamespace) {
  EXPECT_EQ(render_case("{{ dict(a=1, b='x') }} {% set ns = namespace(d) %}{{ ns.a }}{{ ns.b }}"),
            "{'a': 1, 'b': 'x'} 12");
}

}  // namespace
}  // namespace strata::jinja
