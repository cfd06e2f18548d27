// Python semantics of Value: truthiness, str()/repr(), equality, iteration, float repr.
#include "strata/text/jinja/value.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/jinja/utf8.h"
#include "strata/text/jinja/value_arena.h"

namespace strata::jinja {

const Value* Dict::find(const std::string& key) const {
  for (const auto& [k, v] : items) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : items) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(key, std::move(value));
}

const Value* CallArgs::kwarg(const std::string& name) const {
  for (const auto& [k, v] : keyword) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* CallArgs::get(size_t index, const std::string& name) const {
  if (index < positional.size()) return &positional[index];
  return kwarg(name);
}

void List::clear() { items.clear(); }
void Dict::clear() { items.clear(); }

Value Value::list(std::vector<Value> items, bool is_tuple) {
  auto l = std::make_shared<List>();
  l->items = std::move(items);
  l->is_tuple = is_tuple;
  ValueArena::track(l);
  return Value(std::move(l));
}

Value Value::dict() {
  auto d = std::make_shared<Dict>();
  ValueArena::track(d);
  return Value(std::move(d));
}

Value Value::function(std::string name, std::function<Value(const CallArgs&)> fn) {
  auto c = std::make_shared<Callable>(Callable{std::move(name), std::move(fn)});
  ValueArena::track(c);
  return Value(std::move(c));
}

namespace {

// JSON nested deeper than this is refused: the conversion and every later walk over the
// values (str, ==, tojson, destruction) recurse once per level.
constexpr int kMaxFromJsonDepth = 256;

Value from_json_at(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxFromJsonDepth)
    fail("template variables nest arrays and objects more than {} levels deep", kMaxFromJsonDepth);
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value(None{});
    case nlohmann::ordered_json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      for (const auto& e : j) items.push_back(from_json_at(e, depth + 1));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Value d = Value::dict();
      for (const auto& [k, v] : j.items()) d.as_dict().items.emplace_back(k, from_json_at(v, depth + 1));
      return d;
    }
    default: return Value(None{});
  }
}

}  // namespace

Value Value::from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_float() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return !as_list().items.empty();
    case Kind::kDict: return as_dict().is_namespace || !as_dict().items.empty();
    case Kind::kCallable: return true;
  }
  return false;
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // "-1.2345e+16": shortest round-trip digits
  const bool negative = sci[0] == '-';
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e_pos; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  const int decpt = exponent + 1;  // value = 0.DIGITS * 10^decpt
  std::string out = negative ? "-" : "";
  if (decpt <= -4 || decpt > 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  } else if (decpt <= 0) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (static_cast<size_t>(decpt) >= digits.size()) {
    out += digits + std::string(static_cast<size_t>(decpt) - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  return out;
}

static std::string repr_string(const std::string& s) {
  const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char quote = use_double ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == quote) out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out + quote;
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::kString: return repr_string(as_string());
    case Kind::kList: {
      const List& l = as_list();
      std::string out = l.is_tuple ? "(" : "[";
      for (size_t i = 0; i < l.items.size(); ++i) out += (i ? ", " : "") + l.items[i].repr();
      if (l.is_tuple && l.items.size() == 1) out += ",";
      return out + (l.is_tuple ? ")" : "]");
    }
    case Kind::kDict: {
      if (as_dict().is_namespace) return "<Namespace>";
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : as_dict().items) {
        out += (first ? "" : ", ") + repr_string(k) + ": " + v.repr();
        first = false;
      }
      return out + "}";
    }
    default: return str();
  }
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return as_bool() ? "True" : "False";
    case Kind::kInt: return std::to_string(as_int());
    case Kind::kFloat: return python_float_repr(as_float());
    case Kind::kString: return as_string();
    case Kind::kCallable: return "<function " + as_callable().name + ">";
    default: return repr();
  }
}

double Value::to_double() const {
  if (is_float()) return as_float();
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  return static_cast<double>(as_int());
}

int64_t Value::to_int() const { return is_bool() ? (as_bool() ? 1 : 0) : as_int(); }

bool Value::equals(const Value& other) const {
  if (is_number() && other.is_number()) {
    if (is_float() || other.is_float()) return to_double() == other.to_double();
    return to_int() == other.to_int();
  }
  if (kind() != other.kind()) return false;
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return true;
    case Kind::kString: return as_string() == other.as_string();
    case Kind::kList: {
      const auto& a = as_list().items;
      const auto& b = other.as_list().items;
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].equals(b[i])) return false;
      }
      return true;
    }
    case Kind::kDict: {
      const Dict& a = as_dict();
      const Dict& b = other.as_dict();
      if (a.is_namespace || b.is_namespace) return &a == &b;
      if (a.items.size() != b.items.size()) return false;
      for (const auto& [k, v] : a.items) {
        const Value* w = b.find(k);
        if (!w || !v.equals(*w)) return false;
      }
      return true;
    }
    case Kind::kCallable: return &as_callable() == &other.as_callable();
    default: return false;
  }
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList: return as_list().is_tuple ? "tuple" : "list";
    case Kind::kDict: return as_dict().is_namespace ? "Namespace" : "dict";
    case Kind::kCallable: return "function";
  }
  return "object";
}

const Value& Value::require_defined() const {
  if (is_undefined()) {
    throw RuntimeError(undefined_hint().empty() ? "value is undefined" : undefined_hint());
  }
  return *this;
}

std::vector<Value> Value::iterate() const {
  switch (kind()) {
    case Kind::kUndefined: return {};
    case Kind::kString: {
      std::vector<Value> out;
      for (const std::string& ch : utf8_chars(as_string())) out.emplace_back(ch);
      return out;
    }
    case Kind::kList: return as_list().items;
    case Kind::kDict: {
      if (as_dict().is_namespace) break;
      std::vector<Value> out;
      for (const auto& [k, v] : as_dict().items) out.emplace_back(k);
      return out;
    }
    default: break;
  }
  throw RuntimeError(fmt::format("'{}' object is not iterable", type_name()));
}

}  // namespace strata::jinja
