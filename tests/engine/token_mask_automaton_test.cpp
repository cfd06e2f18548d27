// The masks constrained requests actually get (TokenMaskAutomaton: states interned into a
// lazy DFA, masks walked with state ids and cached) equal the brute-force masks on the real
// Qwen3 vocabulary, for a regex, a GBNF grammar and a schema with bounds, at several states
// and when a state is asked for again; and one automaton serves every sequence of an owner.
#include <gtest/gtest.h>

#include "engine/token_mask_test_support.h"
#include "strata/engine/gbnf_compiler.h"
#include "strata/engine/grammar_state.h"
#include "strata/engine/json_grammar.h"
#include "strata/engine/json_schema_grammar.h"
#include "strata/engine/regex_compiler.h"
#include "strata/engine/token_mask_automaton.h"
#include "text/tokenizer_fixtures.h"

namespace strata {
namespace {

// At each prefix the automaton's mask is exactly the tokens whose text the state takes.
template <typename State>
void expect_brute_force(const text::Tokenizer& tokenizer, const JsonTokenMask& mask, const State& start,
                        std::initializer_list<std::string_view> prefixes) {
  TokenMaskAutomaton<State> automaton;
  for (int round = 0; round < 2; ++round)  // the second round comes from the cache
    for (std::string_view prefix : prefixes) {
      State state = start;
      ASSERT_TRUE(state.feed(prefix)) << prefix;
      const std::vector<uint32_t> bits = automaton.allowed(state, mask);
      for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
        State t = state;
        const bool ok = !tokenizer.is_special(id) && !mask.token_text(id).empty() && t.feed(mask.token_text(id));
        ASSERT_EQ(((bits[id / 32] >> (id % 32)) & 1u) != 0, ok) << prefix << " token " << id << " round " << round;
      }
    }
}

TEST(TokenMaskAutomaton, RegexMasksAreExact) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  const auto regex = compile_regex(R"((Mr|Ms)\. [A-Z][a-z]{1,8}, \d{2,3} years)");
  expect_brute_force(tokenizer, mask, GrammarState(regex.get()), {"", "M", "Mr. ", "Ms. Ann", "Mr. Bo, 12", "Mr. Bo, 123 y"});
}

TEST(TokenMaskAutomaton, GrammarMasksAreExact) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  const auto grammar = compile_gbnf(R"(root ::= list
list ::= "[" (item ("," " "? item)*)? "]"
item ::= list | [0-9]+ | "\"" [^"\\]* "\"")");
  expect_brute_force(tokenizer, mask, GrammarState(grammar.get()), {"", "[", "[[1, \"a", "[[], [[", "[12"});
}

TEST(TokenMaskAutomaton, SchemaMasksAreExact) {
  const text::Tokenizer& tokenizer = test::fixture_tokenizer("qwen3");
  const JsonTokenMask mask(tokenizer);
  const auto schema = CompiledSchema::compile(nlohmann::ordered_json::parse(R"({"type": "object", "properties": {
      "n": {"type": "integer", "minimum": 10, "maximum": 250}, "d": {"type": "string", "format": "date"},
      "s": {"type": "string", "maxLength": 3}}, "required": ["n", "d", "s"]})"));
  expect_brute_force(tokenizer, mask, JsonSchemaGrammar(schema.get()),
                     {"", "{\"n\": ", "{\"n\": 2", "{\"n\": 25, \"d\": \"20", "{\"n\": 25, \"d\": \"2024-01-01\", \"s\": \"ab"});
}

TEST(TokenMaskAutomaton, OneAutomatonPerOwner) {
  const auto a = compile_regex("a+"), b = compile_regex("a+");
  EXPECT_EQ(automaton_for<GrammarState>(a), automaton_for<GrammarState>(a));
  EXPECT_NE(automaton_for<GrammarState>(a), automaton_for<GrammarState>(b));
  EXPECT_EQ(automaton_for<JsonGrammar>(nullptr), automaton_for<JsonGrammar>(nullptr));
}

}  // namespace
}  // namespace strata
