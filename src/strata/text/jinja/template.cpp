// Template: parse once, render with a fresh interpreter and a globals scope per call.
#include "strata/text/jinja/template.h"

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/parser.h"
#include "strata/text/jinja/value_arena.h"

namespace strata::jinja {
namespace {

// jinja2's sandbox caps range() at this many items.
constexpr int64_t kMaxRange = 100000;

Value builtin_range(const CallArgs& args) {
  if (!args.keyword.empty() || args.positional.empty() || args.positional.size() > 3) {
    throw RuntimeError("range() takes 1 to 3 integer arguments");
  }
  for (const Value& a : args.positional) {
    if (!a.is_int() && !a.is_bool()) throw RuntimeError("range() arguments must be integers, not " + a.type_name());
  }
  const auto& p = args.positional;
  const int64_t start = p.size() == 1 ? 0 : p[0].to_int();
  const int64_t stop = p.size() == 1 ? p[0].to_int() : p[1].to_int();
  const int64_t step = p.size() == 3 ? p[2].to_int() : 1;
  if (step == 0) throw RuntimeError("range() step must not be zero");
  const double count = std::max(0.0, std::ceil((static_cast<double>(stop) - start) / step));
  if (count > kMaxRange) {
    throw RuntimeError(fmt::format("range too big: {} items, the limit is {}", count, kMaxRange));
  }
  std::vector<Value> items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    items.emplace_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;  // the next value lies past INT64 limits
  }
  return Value::list(std::move(items));
}

// namespace(dict?, **kwargs) and dict(**kwargs).
Value builtin_mapping(const CallArgs& args, bool is_namespace) {
  Value out = Value::dict();
  out.as_dict().is_namespace = is_namespace;
  for (const Value& p : args.positional) {
    if (!p.is_dict()) throw RuntimeError("namespace()/dict() take a dict and keyword arguments");
    for (const auto& [k, v] : p.as_dict().items) out.as_dict().set(k, v);
  }
  for (const auto& [k, v] : args.keyword) out.as_dict().set(k, v);
  return out;
}

ScopePtr make_globals(const nlohmann::ordered_json& context, const RenderOptions& options) {
  if (!context.is_object() && !context.is_null()) {
    fail("template context must be a JSON object, got {}", context.type_name());
  }
  auto globals = make_scope();
  globals->set("range", Value::function("range", builtin_range));
  globals->set("namespace", Value::function("namespace", [](const CallArgs& a) {
                 return builtin_mapping(a, true);
               }));
  globals->set("dict", Value::function("dict", [](const CallArgs& a) {
                 return builtin_mapping(a, false);
               }));
  globals->set("raise_exception", Value::function("raise_exception", [](const CallArgs& a) -> Value {
                 const Value* msg = a.get(0, "message");
                 throw RuntimeError("raise_exception: " + (msg ? msg->str() : std::string()));
               }));
  for (const auto& [name, fn] : options.functions) globals->set(name, Value::function(name, fn));
  if (context.is_object()) {
    for (const auto& [k, v] : context.items()) globals->set(k, Value::from_json(v));
  }
  return globals;
}

}  // namespace

Template Template::parse(const std::string& source, const LexOptions& options) {
  Template t;
  t.body_ = std::make_shared<const Body>(parse_source(source, options));
  return t;
}

std::string Template::render(const nlohmann::ordered_json& context, const RenderOptions& options) const {
  const ValueArena arena;  // declared first: outlives every value of this render
  Interpreter interpreter(options.limits);
  return interpreter.render(*body_, make_globals(context, options));
}

std::string render(const std::string& template_source, const nlohmann::ordered_json& context) {
  return Template::parse(template_source).render(context);
}

}  // namespace strata::jinja
