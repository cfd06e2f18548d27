// OutputConstraint: what a constrained request's output must be (response_format
// json_object or json_schema, a regex, choice or grammar, or tool calls when tool_choice
// forces them), tracked token by token: the grammar state, the mask of tokens that may come
// next (from the constraint's shared TokenMaskAutomaton), and whether the output must end (done) or may end (can_end: the
// engine then lets the end-of-sequence tokens through).
#pragma once

#include <memory>
#include <string_view>
#include <variant>
#include <vector>

#include "strata/engine/grammar_state.h"
#include "strata/engine/json_grammar.h"
#include "strata/engine/json_schema_grammar.h"
#include "strata/engine/json_token_mask.h"
#include "strata/engine/request.h"
#include "strata/engine/token_mask_automaton.h"
#include "strata/engine/tool_call_grammar.h"

namespace strata {

class OutputConstraint {
 public:
  // The request's constraint, or null when its output is free.
  static std::unique_ptr<OutputConstraint> for_request(const GenerationRequest& request);

  // States with a key() go through the constraint's automaton; tool calls walk each time.
  std::vector<uint32_t> allowed(const JsonTokenMask& mask) const {
    return std::visit(
        [&](const auto& g) -> std::vector<uint32_t> {
          using State = std::decay_t<decltype(g)>;
          if constexpr (requires { g.key(); })
            return static_cast<TokenMaskAutomaton<State>*>(automaton_.get())->allowed(g, mask);
          else
            return mask.allowed(g);
        },
        grammar_);
  }
  // False when the text cannot follow (the state is then unchanged).
  bool feed(std::string_view text) {
    return std::visit([&](auto& g) { return g.feed(text); }, grammar_);
  }
  bool done() const {
    return std::visit([](const auto& g) { return g.done(); }, grammar_);
  }
  bool can_end() const {
    if (const auto* calls = std::get_if<ToolCallGrammar>(&grammar_)) return calls->can_end();
    if (const auto* g = std::get_if<GrammarState>(&grammar_)) return g->can_end();
    return false;
  }

 private:
  using Grammar = std::variant<JsonGrammar, JsonSchemaGrammar, ToolCallGrammar, GrammarState>;
  OutputConstraint(std::shared_ptr<const void> owner, Grammar grammar)
      : owner_(std::move(owner)), grammar_(std::move(grammar)) {
    std::visit(
        [&](const auto& g) {
          using State = std::decay_t<decltype(g)>;
          if constexpr (requires { g.key(); }) automaton_ = automaton_for<State>(owner_);
        },
        grammar_);
  }

  std::shared_ptr<const void> owner_;  // the schema or format the grammar points into
  Grammar grammar_;
  std::shared_ptr<void> automaton_;  // TokenMaskAutomaton<the grammar's type>, shared
};

inline std::unique_ptr<OutputConstraint> OutputConstraint::for_request(const GenerationRequest& request) {
  if (request.tool_calls)
    return std::unique_ptr<OutputConstraint>(
        new OutputConstraint(request.tool_calls, ToolCallGrammar(request.tool_calls.get())));
  if (request.json_schema)
    return std::unique_ptr<OutputConstraint>(
        new OutputConstraint(request.json_schema, JsonSchemaGrammar(request.json_schema.get())));
  if (request.grammar)
    return std::unique_ptr<OutputConstraint>(new OutputConstraint(request.grammar, GrammarState(request.grammar.get())));
  if (request.json_object) return std::unique_ptr<OutputConstraint>(new OutputConstraint(nullptr, JsonGrammar()));
  return nullptr;
}

}  // namespace strata
