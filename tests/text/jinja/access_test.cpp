// Attribute, item and slice access, Undefined semantics, dict methods.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaAccess, AttrAndItem) {
  EXPECT_EQ(render_case("{{ d.a }} {{ d['b'] }} {{ msgs[0].role }} {{ msgs[1]['content'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} {{ s[0] }} {{ u[1] }}"),
            "1 2 user yo 3 2 1 H \xf0""\x9f""\x8c""\x8a""");
}

TEST(JinjaAccess, Slices) {
  EXPECT_EQ(render_case("{{ l[1:] }} {{ l[:-1] }} {{ l[::-1] }} {{ l[::2] }} {{ s[-5:] }} {{ s[::-1] }} {{ u[::-1] }} {{ l[5:] }} {{ l[-10:1] }} {{ msgs[::-1][0].content }} {{ l[2:0:-1] }}"),
            "[1, 2] [3, 1] [2, 1, 3] [3, 2] World dlroW olleH x\xf0""\x9f""\x8c""\x8a""\xc3""\xa9"" [] [3] bye [2, 1]");
}

TEST(JinjaAccess, MissingIsUndefined) {
  EXPECT_EQ(render_case("[{{ d.zz }}][{{ d['zz'] }}][{{ l[10] }}][{{ msgs[2].extra }}][{{ msgs[0].extra is defined }}][{{ nope }}]"),
            "[][][][1][False][]");
}

TEST(JinjaAccess, UndefinedBehaviour) {
  EXPECT_EQ(render_case("{{ nope is defined }} {{ nope is undefined }} {{ nope|length }} {% for x in nope %}x{% endfor %}{{ nope ~ 'a' }} {{ nope == nope }} {{ not nope }} {{ nope|default('D') }} {{ (nope or 'o') }}"),
            "False True 0 a True True D o");
}

TEST(JinjaAccess, DictMethods) {
  EXPECT_EQ(render_case("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {{ d.keys()|list }} {{ d.values()|list }} {{ d.get('a') }} {{ d.get('zz') }} {{ d.get('zz', 9) }}"),
            "b=2;a=1; ['b', 'a'] [2, 1] 1 None 9");
}

TEST(JinjaAccess, DictIterationOrder) {
  EXPECT_EQ(render_case("{% for k in d %}{{ k }}{% endfor %}"),
            "ba");
}

}  // namespace
}  // namespace strata::jinja
