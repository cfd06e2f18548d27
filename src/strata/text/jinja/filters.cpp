// String, number and conversion filters, plus the dispatcher over every builtin filter.
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "strata/text/jinja/builtins.h"
#include "strata/text/jinja/methods.h"
#include "strata/text/jinja/pyjson.h"
#include "strata/text/jinja/utf8.h"

namespace strata::jinja {
namespace {

constexpr int64_t kMaxIndent = 1024;  // Python has no limit; a huge one only burns memory

// transformers: tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)
Value filter_tojson(const Value& value, const CallArgs& args) {
  JsonDumpOptions options;
  options.ensure_ascii = bool_arg(args, 0, "ensure_ascii", false);
  if (const Value* indent = args.get(1, "indent"); indent && !indent->is_none()) {
    if (indent->is_string()) {
      options.indent = indent->as_string();
    } else if (indent->is_int() || indent->is_bool()) {
      if (indent->to_int() > kMaxIndent) throw RuntimeError(fmt::format("tojson: indent {} is over {}", indent->to_int(), kMaxIndent));
      options.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent->to_int())), ' ');
    } else {
      throw RuntimeError("tojson: indent must be an integer or a string, not " + indent->type_name());
    }
    options.item_separator = ",";
  }
  if (const Value* seps = args.get(2, "separators"); seps && !seps->is_none()) {
    if (!seps->is_list() || seps->as_list().items.size() != 2) {
      throw RuntimeError("tojson: separators must be a pair of strings");
    }
    options.item_separator = seps->as_list().items[0].str();
    options.key_separator = seps->as_list().items[1].str();
  }
  options.sort_keys = bool_arg(args, 3, "sort_keys", false);
  return Value(python_json_dumps(value, options));
}

Value filter_default(const Value& value, const CallArgs& args) {
  const Value* dflt = args.get(0, "default_value");
  const bool boolean = bool_arg(args, 1, "boolean", false);
  if (value.is_undefined() || (boolean && !value.truthy())) return dflt ? *dflt : Value("");
  return value;
}

Value filter_int(const Value& value, const CallArgs& args) {
  const int64_t dflt = int_arg(args, 0, "default", 0, "int");
  const int64_t base = int_arg(args, 1, "base", 10, "int");
  if (value.is_int() || value.is_bool()) return Value(value.to_int());
  if (value.is_float()) {
    return std::isfinite(value.as_float()) ? Value(static_cast<int64_t>(value.as_float())) : Value(dflt);
  }
  if (!value.is_string()) return Value(dflt);
  const std::string s = python_strip(value.as_string(), nullptr, true, true);
  try {
    size_t used = 0;
    const int64_t parsed = std::stoll(s, &used, static_cast<int>(base));
    if (used == s.size()) return Value(parsed);
    size_t fused = 0;
    const double f = std::stod(s, &fused);
    if (fused == s.size() && std::isfinite(f)) return Value(static_cast<int64_t>(f));
  } catch (const std::exception&) {
  }
  return Value(dflt);
}

Value filter_float(const Value& value, const CallArgs& args) {
  const Value* dflt_arg = args.get(0, "default");
  const Value dflt = dflt_arg ? *dflt_arg : Value(0.0);
  if (value.is_number()) return Value(value.to_double());
  if (!value.is_string()) return dflt;
  const std::string s = python_strip(value.as_string(), nullptr, true, true);
  try {
    size_t used = 0;
    const double f = std::stod(s, &used);
    if (used == s.size()) return Value(f);
  } catch (const std::exception&) {
  }
  return dflt;
}

// Python's round(x, n): correctly rounded, ties to even (printf rounds the exact binary value).
double python_round(double x, int64_t precision) {
  if (!std::isfinite(x) || precision > 300) return x;
  if (precision < 0) {
    const double scale = std::pow(10.0, static_cast<double>(-precision));
    return std::nearbyint(x / scale) * scale;
  }
  const std::string s = fmt::format("{:.{}f}", x, precision);
  return std::stod(s);
}

Value filter_round(const Value& value, const CallArgs& args) {
  const int64_t precision = int_arg(args, 0, "precision", 0, "round");
  const std::string* method = string_arg(args, 1, "method", "round");
  if (!value.is_number()) throw RuntimeError("round: value must be a number, not " + value.type_name());
  const double x = value.to_double();
  if (!method || *method == "common") return Value(python_round(x, precision));
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (*method == "ceil") return Value(std::ceil(x * scale) / scale);
  if (*method == "floor") return Value(std::floor(x * scale) / scale);
  throw RuntimeError("round: method must be 'common', 'ceil' or 'floor'");
}

Value filter_indent(const Value& value, const CallArgs& args) {
  const Value* width = args.get(0, "width");
  std::string indention = width && width->is_string() ? width->as_string()
                                                       : std::string(int_arg(args, 0, "width", 4, "indent"), ' ');
  const bool first = bool_arg(args, 1, "first", false);
  const bool blank = bool_arg(args, 2, "blank", false);
  static const std::string kNewline = "\n";
  const std::vector<std::string> lines = python_split(value.str(), &kNewline, -1);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i == 0) {
      out = lines[0];
      continue;
    }
    out += "\n";
    if (blank || !lines[i].empty()) out += indention;
    out += lines[i];
  }
  if (first) out = indention + out;
  return Value(std::move(out));
}

Value filter_wordcount(const Value& value) {
  int64_t count = 0;
  bool in_word = false;
  for (unsigned char c : value.str()) {
    const bool word_char = std::isalnum(c) || c == '_' || c >= 0x80;
    if (word_char && !in_word) ++count;
    in_word = word_char;
  }
  return Value(count);
}

Value filter_abs(const Value& value) {
  if (value.is_float()) return Value(std::fabs(value.as_float()));
  if (value.is_int() || value.is_bool()) {
    const int64_t i = value.to_int();
    if (i == INT64_MIN) throw RuntimeError("abs: integer overflow");
    return Value(i < 0 ? -i : i);
  }
  throw RuntimeError("bad operand type for abs(): '" + value.type_name() + "'");
}

bool apply_string_filter(const std::string& name, const Value& value, const CallArgs& args,
                         Value* result) {
  if (name == "trim") {
    *result = Value(python_strip(value.str(), string_arg(args, 0, "chars", "trim"), true, true));
  } else if (name == "upper") {
    *result = Value(ascii_upper(value.str()));
  } else if (name == "lower") {
    *result = Value(ascii_lower(value.str()));
  } else if (name == "capitalize") {
    *result = Value(python_capitalize(value.str()));
  } else if (name == "title") {
    *result = Value(python_title(value.str()));
  } else if (name == "replace") {
    const std::string* from = string_arg(args, 0, "old", "replace");
    const std::string* to = string_arg(args, 1, "new", "replace");
    if (!from || !to) throw RuntimeError("replace needs two string arguments");
    *result = Value(replace_all(value.str(), *from, *to, int_arg(args, 2, "count", -1, "replace")));
  } else if (name == "e" || name == "escape" || name == "forceescape") {
    *result = Value(html_escape(value.str()));
  } else if (name == "string") {
    *result = value.is_string() ? value : Value(value.str());
  } else if (name == "safe") {
    *result = value;
  } else if (name == "wordcount") {
    *result = filter_wordcount(value);
  } else if (name == "indent") {
    *result = filter_indent(value, args);
  } else {
    return false;
  }
  return true;
}

}  // namespace

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args) {
  Value result;
  if (apply_string_filter(name, value, args, &result)) return result;
  if (apply_sequence_filter(name, value, args, &result)) return result;
  if (name == "tojson") return filter_tojson(value, args);
  if (name == "default" || name == "d") return filter_default(value, args);
  if (name == "int") return filter_int(value, args);
  if (name == "float") return filter_float(value, args);
  if (name == "abs") return filter_abs(value);
  if (name == "round") return filter_round(value, args);
  if (name == "attr") {
    const std::string* attr = string_arg(args, 0, "name", "attr");
    if (!attr) throw RuntimeError("attr needs an attribute name");
    return get_attribute(value, *attr);
  }
  throw RuntimeError(fmt::format("no filter named '{}'", name));
}

}  // namespace strata::jinja
