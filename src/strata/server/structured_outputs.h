// vLLM's structured-output request fields read into constraints the engine enforces:
// `structured_outputs` {json | regex | choice | grammar | json_object} and the older
// guided_json, guided_regex, guided_choice, guided_grammar, plus llama.cpp's `grammar`
// (GBNF). At most one constraint per request, response_format included.
#pragma once

#include <memory>

#include "strata/engine/grammar.h"
#include "strata/engine/json_schema_grammar.h"
#include "strata/server/json_fields.h"

namespace strata::server {

struct StructuredOutput {
  bool json_object = false;
  std::shared_ptr<const CompiledSchema> json_schema;
  std::shared_ptr<const CompiledGrammar> grammar;  // a regex, choice or GBNF grammar
  bool any() const { return json_object || json_schema || grammar; }
};

// Empty when the body asks for none; a 400 naming the field for a malformed value (a bad
// regex, grammar or schema: the message says what is wrong where) or for two constraints.
StructuredOutput read_structured_outputs(const Json& body);

// The schema of a json_schema constraint (an object, or JSON text holding one), or a 400
// naming `field`.
std::shared_ptr<const CompiledSchema> compile_schema_field(const Json& schema, const std::string& field);

}  // namespace strata::server
