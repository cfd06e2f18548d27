// The JSON schema keywords that bound a value of one type: strings (minLength, maxLength,
// pattern, format), numbers and integers (minimum, maximum, exclusiveMinimum,
// exclusiveMaximum), arrays (minItems, maxItems). Each is enforced or refused with an
// error naming it; a keyword beside a type it does not bound is refused.
#pragma once

#include <nlohmann/json.hpp>

#include "strata/engine/json_schema_grammar.h"

namespace strata::json_schema_keywords {

// Fails when `s` holds a bounding keyword its type (or enum / const, or a type list) cannot take.
void check_types(const nlohmann::ordered_json& s);

void read_string(const nlohmann::ordered_json& s, CompiledSchema::Node& node);
void read_number(const nlohmann::ordered_json& s, CompiledSchema::Node& node);
void read_array(const nlohmann::ordered_json& s, CompiledSchema::Node& node);

// The formats `format` takes, for messages.
extern const char* const kFormats;

}  // namespace strata::json_schema_keywords
