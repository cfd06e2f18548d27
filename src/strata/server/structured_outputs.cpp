#include "strata/server/structured_outputs.h"

#include <list>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/engine/gbnf_compiler.h"
#include "strata/engine/regex_compiler.h"
#include "strata/server/api_error.h"

namespace strata::server {
namespace {

// Compiled constraints by their text, most recently used first: a client sending the same
// schema or regex again gets the same compiled object, so the token masks its mask
// automaton already holds (TokenMaskAutomaton) serve the new request too.
template <typename Compiled>
class CompileCache {
 public:
  template <typename Compile>
  std::shared_ptr<const Compiled> get(const std::string& key, Compile&& compile) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->first == key) {
          entries_.splice(entries_.begin(), entries_, it);
          return entries_.front().second;
        }
    }
    std::shared_ptr<const Compiled> compiled = compile();  // throws for a bad one: nothing cached
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.emplace_front(key, compiled);
    if (entries_.size() > kMaxEntries) entries_.pop_back();
    return compiled;
  }

 private:
  static constexpr size_t kMaxEntries = 16;
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const Compiled>>> entries_;
};

CompileCache<CompiledGrammar>& grammar_cache() {
  static CompileCache<CompiledGrammar> cache;
  return cache;
}

// Keys of structured_outputs that change nothing here: there is one backend, no fallback.
bool is_backend_hint(const std::string& key) { return key == "disable_fallback" || key == "backend"; }

std::string read_text(const Json& value, const std::string& field) {
  if (!value.is_string() || value.get<std::string>().empty())
    throw bad_request(fmt::format("'{}' must be a non-empty string, got {}", field, describe(value)), field);
  return value.get<std::string>();
}

std::vector<std::string> read_choices(const Json& value, const std::string& field) {
  if (!value.is_array() || value.empty())
    throw bad_request(fmt::format("'{}' must be a non-empty array of strings, got {}", field, describe(value)), field);
  std::vector<std::string> out;
  for (const Json& c : value) out.push_back(read_text(c, field + "[]"));
  return out;
}

// One constraint of kind `kind` ("json", "regex", "choice", "grammar", "json_object") from
// `value`; compile errors become 400s naming `field`.
void read_one(const std::string& kind, const Json& value, const std::string& field, StructuredOutput& out) {
  if (out.any())
    throw bad_request(fmt::format("'{}' asks for a second output constraint; give one of response_format, "
                                  "structured_outputs (one of json, regex, choice, grammar), guided_json, "
                                  "guided_regex, guided_choice, guided_grammar or grammar",
                                  field),
                      field);
  try {
    if (kind == "json") out.json_schema = compile_schema_field(value, field);
    else if (kind == "regex")
      out.grammar = grammar_cache().get("regex:" + read_text(value, field),
                                        [&] { return compile_regex(read_text(value, field)); });
    else if (kind == "choice")
      out.grammar = grammar_cache().get("choice:" + value.dump(),
                                        [&] { return compile_choice(read_choices(value, field)); });
    else if (kind == "grammar")
      out.grammar = grammar_cache().get("gbnf:" + read_text(value, field),
                                        [&] { return compile_gbnf(read_text(value, field)); });
    else if (!value.is_boolean()) throw bad_request(fmt::format("'{}' must be a boolean", field), field);
    else out.json_object = value.get<bool>();
  } catch (const strata::Error& e) {
    throw bad_request(fmt::format("'{}': {}", field, e.what()), field);
  }
}

void read_structured_outputs_object(const Json& spec, StructuredOutput& out) {
  if (!spec.is_object())
    throw bad_request("'structured_outputs' must be an object such as {\"regex\": \"[0-9]+\"}", "structured_outputs");
  for (const auto& [key, value] : spec.items()) {
    if (value.is_null() || is_backend_hint(key)) continue;
    const std::string field = "structured_outputs." + key;
    if (key != "json" && key != "regex" && key != "choice" && key != "grammar" && key != "json_object")
      throw bad_request(fmt::format("'{}' is not supported; structured_outputs takes one of json, regex, choice, "
                                    "grammar or json_object",
                                    field.substr(0, 80)),
                        "structured_outputs");
    read_one(key, value, field, out);
  }
  if (!out.any())
    throw bad_request("'structured_outputs' names no constraint; give one of json, regex, choice, grammar",
                      "structured_outputs");
}

}  // namespace

std::shared_ptr<const CompiledSchema> compile_schema_field(const Json& schema, const std::string& field) {
  Json parsed = schema;
  if (schema.is_string()) {
    parsed = Json::parse(schema.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) throw bad_request(fmt::format("'{}' is a string but not JSON text", field), field);
  }
  if (!parsed.is_object()) throw bad_request(fmt::format("'{}' must be a JSON schema (an object)", field), field);
  static CompileCache<CompiledSchema> cache;
  try {
    return cache.get(parsed.dump(), [&] { return CompiledSchema::compile(parsed); });
  } catch (const strata::Error& e) {
    throw bad_request(e.what(), field);
  }
}

StructuredOutput read_structured_outputs(const Json& body) {
  StructuredOutput out;
  if (const Json* spec = find_field(body, "structured_outputs"); spec != nullptr && !spec->is_null())
    read_structured_outputs_object(*spec, out);
  const std::pair<const char*, const char*> aliases[] = {
      {"guided_json", "json"}, {"guided_regex", "regex"}, {"guided_choice", "choice"},
      {"guided_grammar", "grammar"}, {"grammar", "grammar"}};
  for (const auto& [field, kind] : aliases)
    if (const Json* value = find_field(body, field); value != nullptr && !value->is_null())
      read_one(kind, *value, field, out);
  return out;
}

}  // namespace strata::server
