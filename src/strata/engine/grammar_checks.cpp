// check_grammar_is_usable: the two properties GrammarState relies on. No left recursion:
// expanding a rule to the bytes it can start with must end. A productive root: some
// finite string is accepted, so the output can always be finished.
#include <functional>

#include "strata/core/error.h"
#include "strata/engine/grammar.h"

namespace strata {
namespace {

using Kind = GrammarElement::Kind;

// Fixpoint over rules: `holds[r]` when some alternative has every element satisfying
// `element_holds` (given the rules found so far).
std::vector<bool> rules_where(const CompiledGrammar& g,
                              const std::function<bool(const GrammarElement&, const std::vector<bool>&)>& element_holds) {
  std::vector<bool> holds(g.alternatives.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.alternatives.size(); ++r) {
      if (holds[r]) continue;
      for (int32_t start : g.alternatives[r]) {
        bool all = true;
        for (int32_t p = start; g.elements[p].kind != Kind::kEnd && all; ++p) all = element_holds(g.elements[p], holds);
        if (all) {
          holds[r] = changed = true;
          break;
        }
      }
    }
  }
  return holds;
}

// The rules each rule can begin with (after nullable elements).
std::vector<std::vector<int32_t>> left_corners(const CompiledGrammar& g, const std::vector<bool>& nullable) {
  std::vector<std::vector<int32_t>> out(g.alternatives.size());
  for (size_t r = 0; r < g.alternatives.size(); ++r)
    for (int32_t start : g.alternatives[r])
      for (int32_t p = start; g.elements[p].kind == Kind::kRule; ++p) {
        out[r].push_back(g.elements[p].value);
        if (!nullable[g.elements[p].value]) break;
      }
  return out;
}

}  // namespace

void check_grammar_is_usable(const CompiledGrammar& g, const std::string& what) {
  const std::vector<bool> nullable = rules_where(g, [](const GrammarElement& e, const std::vector<bool>& holds) {
    return e.kind == Kind::kRule && holds[e.value];
  });
  const std::vector<bool> productive = rules_where(g, [](const GrammarElement& e, const std::vector<bool>& holds) {
    return e.kind == Kind::kBytes || holds[e.value];
  });
  if (!productive[g.root])
    fail("{}: rule '{}' accepts no finite string (every alternative recurses forever); give it an alternative "
         "that ends", what, g.rule_names[g.root]);
  const std::vector<std::vector<int32_t>> corners = left_corners(g, nullable);
  std::vector<uint8_t> mark(g.alternatives.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<void(int32_t)> visit = [&](int32_t r) {
    mark[r] = 1;
    for (int32_t next : corners[r]) {
      if (mark[next] == 1)
        fail("{}: rule '{}' is left-recursive (it can reach itself before reading a character); rewrite it with "
             "repetition, e.g. list ::= item (\",\" item)*", what, g.rule_names[next]);
      if (mark[next] == 0) visit(next);
    }
    mark[r] = 2;
  };
  for (size_t r = 0; r < g.alternatives.size(); ++r)
    if (mark[r] == 0) visit(static_cast<int32_t>(r));
}

}  // namespace strata
