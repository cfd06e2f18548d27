// Renders free everything they built, including reference cycles (found by fuzz_jinja: every
// template defining a macro leaked its whole scope chain, context included, on each render).
#include "strata/text/jinja/value_arena.h"

#include <memory>

#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/text/jinja/template.h"

namespace strata::jinja {
namespace {

// A global function whose captured sentinel stays alive exactly as long as the globals scope.
struct Probe {
  RenderOptions options;
  std::weak_ptr<int> watch;
  Probe() {
    auto sentinel = std::make_shared<int>(0);
    watch = sentinel;
    options.functions["probe"] = [sentinel](const CallArgs&) { return Value("p"); };
  }
};

TEST(JinjaValueArena, MacroClosureCycleIsFreedAfterRender) {
  Probe probe;
  const Template tmpl = Template::parse("{% macro m(x) %}{{ probe() }}{{ x }}{% endmacro %}{{ m(1) }}");
  EXPECT_EQ(tmpl.render(nlohmann::ordered_json::object(), probe.options), "p1");
  probe.options.functions.clear();
  EXPECT_TRUE(probe.watch.expired());
}

TEST(JinjaValueArena, NamespaceHoldingItselfIsFreedAfterRender) {
  Probe probe;
  const Template tmpl = Template::parse(
      "{% set ns = namespace(f=probe) %}{% set ns.self = ns %}{{ ns.self.self.f() }}");
  EXPECT_EQ(tmpl.render(nlohmann::ordered_json::object(), probe.options), "p");
  probe.options.functions.clear();
  EXPECT_TRUE(probe.watch.expired());
}

TEST(JinjaValueArena, CycleIsFreedWhenTheRenderFails) {
  Probe probe;
  const Template tmpl = Template::parse("{% macro m() %}{{ probe() }}{% endmacro %}{{ m() }}{{ raise_exception('no') }}");
  EXPECT_THROW(tmpl.render(nlohmann::ordered_json::object(), probe.options), Error);
  probe.options.functions.clear();
  EXPECT_TRUE(probe.watch.expired());
}

TEST(JinjaValueArena, EmptiesOnlyWhatWasCreatedWhileCurrent) {
  const Value before = Value::list({Value(1)});
  std::weak_ptr<int> watch;
  {
    const ValueArena arena;
    auto sentinel = std::make_shared<int>(0);
    watch = sentinel;
    Value ns = Value::dict();
    ns.as_dict().set("self", ns);
    ns.as_dict().set("f", Value::function("f", [sentinel](const CallArgs&) { return Value(); }));
  }
  EXPECT_TRUE(watch.expired());
  EXPECT_EQ(before.as_list().items.size(), 1u);
}

}  // namespace
}  // namespace strata::jinja
