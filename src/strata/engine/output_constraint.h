// OutputConstraint: what a constrained request's output must be (response_format
// json_object or json_schema), tracked token by token: the grammar state, the mask of tokens
// that may come next, and whether the value is complete.
#pragma once

#include <memory>
#include <string_view>
#include <variant>
#include <vector>

#include "strata/engine/json_grammar.h"
#include "strata/engine/json_schema_grammar.h"
#include "strata/engine/json_token_mask.h"

namespace strata {

class OutputConstraint {
 public:
  // schema null: any JSON object.
  explicit OutputConstraint(std::shared_ptr<const CompiledSchema> schema)
      : schema_(std::move(schema)),
        grammar_(schema_ ? Grammar(JsonSchemaGrammar(schema_.get())) : Grammar(JsonGrammar())) {}

  std::vector<uint32_t> allowed(const JsonTokenMask& mask) const {
    return std::visit([&](const auto& g) { return mask.allowed(g); }, grammar_);
  }
  // False when the text cannot follow (the state is then unchanged).
  bool feed(std::string_view text) {
    return std::visit([&](auto& g) { return g.feed(text); }, grammar_);
  }
  bool done() const {
    return std::visit([](const auto& g) { return g.done(); }, grammar_);
  }

 private:
  using Grammar = std::variant<JsonGrammar, JsonSchemaGrammar>;
  std::shared_ptr<const CompiledSchema> schema_;  // outlives the grammar, which points into it
  Grammar grammar_;
};

}  // namespace strata
