// Builtin filters, with transformers' tojson.
// Expected strings are what jinja2 3.1 renders under transformers' settings.
#include <gtest/gtest.h>

#include "text/jinja/render_case.h"

namespace strata::jinja {
namespace {

TEST(JinjaFilters, StringFilters) {
  EXPECT_EQ(render_case("{{ '  a b  '|trim }}|{{ 'xxaxx'|trim('x') }}|{{ s|upper }}|{{ s|lower }}|{{ 'hello world'|capitalize }}|{{ 'hello wORLD x1y'|title }}|{{ s|replace('o', '0') }}|{{ s|replace('o', '0', 1) }}"),
            "a b|a|HELLO WORLD|hello world|Hello world|Hello World X1y|Hell0 W0rld|Hell0 World");
}

TEST(JinjaFilters, Length) {
  EXPECT_EQ(render_case("{{ l|length }} {{ s|length }} {{ u|length }} {{ d|length }} {{ l|count }} {{ e|length }}"),
            "3 11 3 2 3 0");
}

TEST(JinjaFilters, Default) {
  EXPECT_EQ(render_case("{{ nope|default('x') }} {{ nope|d('y') }} {{ none|default('z') }} {{ ''|default('w', true) }} {{ 0|d(5, true) }} {{ 'v'|default('q') }} [{{ nope|default }}]"),
            "x y None w 5 v []");
}

TEST(JinjaFilters, Join) {
  EXPECT_EQ(render_case("{{ l|join(', ') }} {{ ['a', 'b']|join }} {{ msgs|join('|', attribute='role') }} {{ [1, none, 'x']|join('-') }}"),
            "3, 1, 2 ab user|assistant|user 1-None-x");
}

TEST(JinjaFilters, FirstLastList) {
  EXPECT_EQ(render_case("{{ l|first }} {{ l|last }} {{ s|first }} {{ 'ab'|list }} {{ d|list }} [{{ e|first }}]"),
            "3 2 H ['a', 'b'] ['b', 'a'] []");
}

TEST(JinjaFilters, Conversions) {
  EXPECT_EQ(render_case("{{ 3|string }} {{ '42'|int + 1 }} {{ '4.7'|int }} {{ 'x'|int }} {{ 'x'|int(9) }} {{ 4.9|int }} {{ '2.5'|float }} {{ 3|float }} {{ 'q'|float }} {{ true|int }} {{ -3|abs }} {{ -2.5|abs }} {{ '0x1A'|int(0, 16) }}"),
            "3 43 4 0 9 4 2.5 3.0 0.0 1 3 2.5 26");
}

TEST(JinjaFilters, Round) {
  EXPECT_EQ(render_case("{{ 2.5|round }} {{ 3.5|round }} {{ 2.567|round(2) }} {{ 2.675|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(0, 'floor') }} {{ 7|round }} {{ 1234|round(-2) }}"),
            "2.0 4.0 2.57 2.67 3.0 2.0 7 1200");
}

TEST(JinjaFilters, Items) {
  EXPECT_EQ(render_case("{% for k, v in d|items %}{{ k }}:{{ v }} {% endfor %}{{ d|items|list }}"),
            "b:2 a:1 [('b', 2), ('a', 1)]");
}

TEST(JinjaFilters, SelectAttr) {
  EXPECT_EQ(render_case("{{ msgs|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }} {{ msgs|rejectattr('role', 'eq', 'user')|list|length }} {{ msgs|selectattr('extra', 'defined')|list|length }} {{ msgs|selectattr('extra')|list|length }} {{ msgs|selectattr('role', '==', 'assistant')|first|attr('content') }}"),
            "hi,bye 1 1 1 ");
}

TEST(JinjaFilters, SelectReject) {
  EXPECT_EQ(render_case("{{ [0, 1, 2, 3, 4]|select('odd')|list }} {{ [0, 1, 2, 3, 4]|reject('odd')|list }} {{ [0, 1, '', 'a', none]|select|list }} {{ [1, 5, 9]|select('gt', 4)|list }} {{ ['a', 'b', 'c']|select('in', ['a', 'c'])|list }}"),
            "[1, 3] [0, 2, 4] [1, 'a'] [5, 9] ['a', 'c']");
}

TEST(JinjaFilters, Map) {
  EXPECT_EQ(render_case("{{ msgs|map(attribute='role')|list }} {{ ['a', 'b']|map('upper')|list }} {{ msgs|map(attribute='extra', default=0)|list }} {{ [' x ', 'y ']|map('trim')|join }} {{ [[1, 2]]|map(attribute='0')|list }}"),
            "['user', 'assistant', 'user'] ['A', 'B'] [0, 0, 1] xy [1]");
}

TEST(JinjaFilters, SortUniqueReverse) {
  EXPECT_EQ(render_case("{{ l|sort }} {{ l|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ msgs|sort(attribute='content')|map(attribute='content')|join(',') }} {{ [1, 2, 1, 3, 2]|unique|list }} {{ ['a', 'A', 'b']|unique|list }} {{ l|reverse|list }} {{ s|reverse }}"),
            "[1, 2, 3] [3, 2, 1] ['A', 'b', 'c'] ['A', 'b', 'c'] bye,hi,yo [1, 2, 3] ['a', 'b'] [2, 1, 3] dlroW olleH");
}

TEST(JinjaFilters, DictSort) {
  EXPECT_EQ(render_case("{{ d|dictsort }} {{ d|dictsort(reverse=true) }} {{ {'x': 2, 'y': 1}|dictsort(by='value') }}"),
            "[('a', 1), ('b', 2)] [('b', 2), ('a', 1)] [('y', 1), ('x', 2)]");
}

TEST(JinjaFilters, MinMaxSum) {
  EXPECT_EQ(render_case("{{ l|min }} {{ l|max }} {{ l|sum }} {{ [1.5, 2]|sum }} {{ msgs|map(attribute='content')|max }} {{ [{'v': 1}, {'v': 4}]|sum(attribute='v') }}"),
            "1 3 6 3.5 yo 5");
}

TEST(JinjaFilters, Escape) {
  EXPECT_EQ(render_case("{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|escape }} {{ '<i>'|safe }}"),
            "&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt; &lt;b&gt; <i>");
}

TEST(JinjaFilters, Indent) {
  EXPECT_EQ(render_case("{{ 'a\nb\n\nc'|indent }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }}|{{ 'a\nb'|indent('> ') }}"),
            "a\n    b\n\n    c|  a\n  b|a\n  \n  b|a\n> b");
}

TEST(JinjaFilters, Wordcount) {
  EXPECT_EQ(render_case("{{ 'hello big_world, 42 times'|wordcount }}"),
            "4");
}

TEST(JinjaFilters, ToJson) {
  EXPECT_EQ(render_case("{{ d|tojson }} {{ l|tojson }} {{ '\xc3""\xa9""\"\\\\\n\t'|tojson }} {{ none|tojson }} {{ true|tojson }} {{ f|tojson }} {{ 1.0|tojson }} {{ msgs[2]|tojson }} {{ {}|tojson }} {{ []|tojson }} {{ u|tojson }}"),
            "{\"b\": 2, \"a\": 1} [3, 1, 2] \"\xc3""\xa9""\\\"\\\\\\n\\t\" null true 1.5 1.0 {\"role\": \"user\", \"content\": \"bye\", \"extra\": 1} {} [] \"\xc3""\xa9""\xf0""\x9f""\x8c""\x8a""x\"");
}

TEST(JinjaFilters, ToJsonIndent) {
  EXPECT_EQ(render_case("{{ {'a': [1, {'b': none}], 'c': {}}|tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}");
}

TEST(JinjaFilters, ToJsonOptions) {
  EXPECT_EQ(render_case("{{ d|tojson(sort_keys=true) }} {{ '\xc3""\xa9""'|tojson(ensure_ascii=true) }} {{ d|tojson(separators=(',', ':')) }} {{ [1, [2]]|tojson(indent=0) }}"),
            "{\"a\": 1, \"b\": 2} \"\\u00e9\" {\"b\":2,\"a\":1} [\n1,\n[\n2\n]\n]");
}

}  // namespace
}  // namespace strata::jinja
