// Python str and dict methods reachable from templates, as bound callables.
// Mutating methods (list.append, dict.update, ...) are absent, as in transformers'
// ImmutableSandboxedEnvironment, where calling them is an error.
#include "strata/text/jinja/methods.h"

#include <fmt/format.h>

#include "strata/text/jinja/utf8.h"

namespace strata::jinja {

const std::string* string_arg(const CallArgs& args, size_t index, const std::string& name,
                              const std::string& what) {
  const Value* v = args.get(index, name);
  if (!v || v->is_none()) return nullptr;
  if (!v->is_string()) {
    throw RuntimeError(fmt::format("{}: argument '{}' must be a string, not {}", what, name,
                                   v->type_name()));
  }
  return &v->as_string();
}

int64_t int_arg(const CallArgs& args, size_t index, const std::string& name, int64_t dflt,
                const std::string& what) {
  const Value* v = args.get(index, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_int() && !v->is_bool()) {
    throw RuntimeError(fmt::format("{}: argument '{}' must be an integer, not {}", what, name,
                                   v->type_name()));
  }
  return v->to_int();
}

bool bool_arg(const CallArgs& args, size_t index, const std::string& name, bool dflt) {
  const Value* v = args.get(index, name);
  return v ? v->truthy() : dflt;
}

namespace {

Value strings_to_list(const std::vector<std::string>& parts) {
  std::vector<Value> items(parts.begin(), parts.end());
  return Value::list(std::move(items));
}

// startswith/endswith accept a string or a tuple of strings.
bool affix_match(const std::string& s, const Value& affix, bool at_start) {
  if (affix.is_list()) {
    for (const Value& a : affix.as_list().items) {
      if (affix_match(s, a, at_start)) return true;
    }
    return false;
  }
  if (!affix.is_string()) throw RuntimeError("startswith/endswith take a string or a tuple of strings");
  const std::string& a = affix.as_string();
  if (a.size() > s.size()) return false;
  return at_start ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
}

bool all_chars(const std::string& s, int (*pred)(int)) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

std::string format_braces(const std::string& fmt_str, const CallArgs& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt_str.size(); ++i) {
    if (fmt_str.compare(i, 2, "{{") == 0 || fmt_str.compare(i, 2, "}}") == 0) {
      out += fmt_str[i++];
    } else if (fmt_str[i] == '{') {
      const size_t close = fmt_str.find('}', i);
      if (close == std::string::npos) throw RuntimeError("str.format: unmatched '{'");
      const std::string field = fmt_str.substr(i + 1, close - i - 1);
      const Value* v = nullptr;
      if (field.empty()) v = next < args.positional.size() ? &args.positional[next++] : nullptr;
      else if (std::isdigit(static_cast<unsigned char>(field[0]))) v = args.get(std::stoul(field), "");
      else v = args.kwarg(field);
      if (!v) throw RuntimeError(fmt::format("str.format: no argument for '{{{}}}'", field));
      out += v->str();
      i = close;
    } else {
      out += fmt_str[i];
    }
  }
  return out;
}

Value split_method(const std::string& s, const std::string& name, const CallArgs& args) {
  const std::string what = "str." + name;
  if (name == "splitlines") {
    static const std::string kNewline = "\n";
    std::vector<std::string> lines = python_split(s, &kNewline, -1);
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    return strings_to_list(lines);
  }
  const std::string* sep = string_arg(args, 0, "sep", what);
  if (sep && sep->empty()) throw RuntimeError(what + ": empty separator");
  const int64_t maxsplit = int_arg(args, 1, "maxsplit", -1, what);
  if (name == "split" || maxsplit < 0) return strings_to_list(python_split(s, sep, maxsplit));
  std::vector<std::string> parts;  // rsplit with a limit: split from the right
  std::string rest = s;
  const std::string sp = sep ? *sep : " ";
  while (std::ssize(parts) < maxsplit) {
    const size_t pos = rest.rfind(sp);
    if (pos == std::string::npos) break;
    parts.insert(parts.begin(), rest.substr(pos + sp.size()));
    rest.resize(pos);
  }
  parts.insert(parts.begin(), rest);
  return strings_to_list(parts);
}

// find/rfind/index/count count code points, as Python does; join concatenates str() values.
Value search_method(const std::string& s, const std::string& name, const CallArgs& args) {
  if (name == "join") {
    const Value* items = args.get(0, "iterable");
    std::string out;
    bool first = true;
    for (const Value& v : items ? items->iterate() : std::vector<Value>{}) {
      out += (first ? "" : s) + v.str();
      first = false;
    }
    return Value(std::move(out));
  }
  const std::string* sub = string_arg(args, 0, "sub", "str." + name);
  if (!sub) throw RuntimeError("str." + name + " needs a string argument");
  if (name == "count") {
    if (sub->empty()) return Value(static_cast<int64_t>(utf8_length(s) + 1));
    int64_t n = 0;
    for (size_t p = s.find(*sub); p != std::string::npos; p = s.find(*sub, p + sub->size())) ++n;
    return Value(n);
  }
  const size_t pos = name == "rfind" ? s.rfind(*sub) : s.find(*sub);
  if (pos == std::string::npos && name == "index") throw RuntimeError("substring not found");
  return Value(pos == std::string::npos ? int64_t{-1}
                                        : static_cast<int64_t>(utf8_length(s.substr(0, pos))));
}

Value string_method(const std::string& s, const std::string& name, const CallArgs& args) {
  const std::string what = "str." + name;
  if (name == "startswith" || name == "endswith") {
    const Value* affix = args.get(0, "prefix");
    if (!affix) throw RuntimeError(what + " needs an argument");
    return Value(affix_match(s, *affix, name == "startswith"));
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const std::string* chars = string_arg(args, 0, "chars", what);
    return Value(python_strip(s, chars, name != "rstrip", name != "lstrip"));
  }
  if (name == "split" || name == "rsplit" || name == "splitlines") return split_method(s, name, args);
  if (name == "upper") return Value(ascii_upper(s));
  if (name == "lower") return Value(ascii_lower(s));
  if (name == "title") return Value(python_title(s));
  if (name == "capitalize") return Value(python_capitalize(s));
  if (name == "replace") {
    const std::string* from = string_arg(args, 0, "old", what);
    const std::string* to = string_arg(args, 1, "new", what);
    if (!from || !to) throw RuntimeError(what + " needs two string arguments");
    return Value(replace_all(s, *from, *to, int_arg(args, 2, "count", -1, what)));
  }
  if (name == "find" || name == "rfind" || name == "count" || name == "index" || name == "join") {
    return search_method(s, name, args);
  }
  if (name == "format") return Value(format_braces(s, args));
  if (name == "isdigit") return Value(all_chars(s, ::isdigit));
  if (name == "isalpha") return Value(all_chars(s, ::isalpha));
  if (name == "isalnum") return Value(all_chars(s, ::isalnum));
  if (name == "isspace") return Value(all_chars(s, ::isspace));
  if (name == "islower") return Value(s != ascii_upper(s) && s == ascii_lower(s));
  if (name == "isupper") return Value(s != ascii_lower(s) && s == ascii_upper(s));
  throw RuntimeError(fmt::format("'str object' has no attribute '{}'", name));
}

const char* const kStringMethods[] = {
    "startswith", "endswith", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines",
    "upper", "lower", "title", "capitalize", "replace", "find", "rfind", "count", "index",
    "join", "format", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper"};

Value dict_method(const Value& self, const std::string& name, const CallArgs& args) {
  const Dict& d = self.as_dict();
  std::vector<Value> out;
  if (name == "get") {
    const Value* key = args.get(0, "key");
    const Value* dflt = args.get(1, "default");
    if (!key) throw RuntimeError("dict.get needs a key");
    const Value* found = key->is_string() ? d.find(key->as_string()) : nullptr;
    return found ? *found : (dflt ? *dflt : Value(None{}));
  }
  for (const auto& [k, v] : d.items) {
    if (name == "items") out.push_back(Value::list({Value(k), v}, true));
    else if (name == "keys") out.emplace_back(k);
    else out.push_back(v);
  }
  return Value::list(std::move(out));
}

}  // namespace

Value get_attribute(const Value& object, const std::string& name) {
  object.require_defined();
  if (object.is_dict()) {
    const bool is_method = !object.as_dict().is_namespace &&
                           (name == "items" || name == "keys" || name == "values" || name == "get");
    if (is_method) {
      return Value::function("dict." + name, [object, name](const CallArgs& args) {
        return dict_method(object, name, args);
      });
    }
    if (const Value* v = object.as_dict().find(name)) return *v;
  }
  if (object.is_string()) {
    for (const char* m : kStringMethods) {
      if (name == m) {
        return Value::function("str." + name, [s = object.as_string(), name](const CallArgs& args) {
          return string_method(s, name, args);
        });
      }
    }
  }
  return Value::undefined(fmt::format("'{} object' has no attribute '{}'", object.type_name(), name));
}

}  // namespace strata::jinja
