// Public entry point of the Jinja interpreter: parse a template once, render it many times
// against JSON contexts. Defaults match transformers' chat-template environment:
// trim_blocks, lstrip_blocks, loop controls; globals range(), namespace(), dict().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/text/jinja/interpreter.h"
#include "strata/text/jinja/lexer.h"
#include "strata/text/jinja/value.h"

namespace strata::jinja {

using Function = std::function<Value(const CallArgs&)>;

struct RenderOptions {
  RenderLimits limits;
  std::map<std::string, Function> functions;  // extra globals, e.g. strftime_now
};

class Template {
 public:
  // Throws strata::Error with the line and column of a syntax error.
  static Template parse(const std::string& source, const LexOptions& options = {});

  // context: a JSON object whose members become template variables (key order kept;
  // a plain nlohmann::json converts implicitly but arrives with sorted keys).
  // Throws strata::Error with the template line and column of a runtime error.
  std::string render(const nlohmann::ordered_json& context, const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

std::string render(const std::string& template_source, const nlohmann::ordered_json& context);

}  // namespace strata::jinja
