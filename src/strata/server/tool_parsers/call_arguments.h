// A call's arguments as the client gets them, whole and while they stream: the model's JSON
// object text without the blanks outside strings (strings, escapes and numbers as written).
// The settled prefix of an object is always a prefix of its whole text, so streamed
// fragments never change what was sent; a {"name", "arguments"} object is read the same way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/server/tool_parsers/tool_parser.h"

namespace strata::server {

// `raw` starts with '{': the compact text of its longest prefix that can still begin a valid
// JSON object (a trailing unfinished UTF-8 character held back), and whether the object closed.
struct ArgumentsPrefix {
  std::string text;
  bool closed = false;
};
ArgumentsPrefix arguments_prefix(std::string_view raw);

// The whole (already validated) JSON text without the blanks outside strings.
std::string compact_json(std::string_view raw);

// {"name": "...", "arguments" or "parameters": ...} read from its text (the first of each key
// counts): nullopt when it is not such an object, or (require_arguments) has no arguments key.
// An object's arguments are compact_json of their text; a string's, its value; null, "{}".
std::optional<ToolCall> call_from_object_text(const ToolParser& parser, std::string_view text,
                                              bool require_arguments);

// The same object while it streams (`text` starts with '{'): the call once its name is whole
// and its arguments have begun, with the settled part of an object's arguments (a string or
// null is given once whole).
std::optional<PartialCall> partial_call_object(std::string_view text);

}  // namespace strata::server
