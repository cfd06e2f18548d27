// Python str methods called from templates.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaMethods, StringMethods) {
  EXPECT_EQ(render_case("{{ s.startswith('Hell') }} {{ s.endswith('x') }} {{ s.startswith(('x', 'He')) }} [{{ '  a  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '\\n\\na\\n'.lstrip('\\n') }}] [{{ ' a '.rstrip() }}] {{ s.upper() }} {{ s.lower() }} {{ s.replace('l', 'L') }} {{ s.replace('l', 'L', 2) }} {{ 'a b'.title() }} {{ 'aBC'.capitalize() }} {{ s.find('o') }} {{ s.find('z') }} {{ s.count('l') }} {{ u.find('x') }}"),
            "True False True [a] [a] [a\n] [ a] HELLO WORLD hello world HeLLo WorLd HeLLo World A B Abc 4 -1 3 2");
}

TEST(JinjaMethods, Split) {
  EXPECT_EQ(render_case("{{ 'a,b,,c'.split(',') }} {{ ' a  b \\n c '.split() }} {{ 'a,b,c'.split(',', 1) }} {{ 'a b c'.split(none, 1) }} {{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'l1\\nl2\\n'.splitlines() }}"),
            "['a', 'b', '', 'c'] ['a', 'b', 'c'] ['a', 'b,c'] ['a', 'b c'] z ['a,b', 'c'] ['l1', 'l2']");
}

TEST(JinjaMethods, FormatAndJoin) {
  EXPECT_EQ(render_case("{{ '{} and {}'.format('a', 1) }} {{ '{0}{0}{name}'.format('x', name='y') }} {{ '-'.join(['a', 'b']) }} {{ '12'.isdigit() }} {{ 'a1'.isalpha() }}"),
            "a and 1 xxy a-b True False");
}

}  // namespace
}  // namespace strata::jinja
