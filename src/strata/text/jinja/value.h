// The dynamic value a Jinja template computes with: Python-like (None, bool, int, float, str,
// list/tuple, insertion-ordered dict, callable) plus jinja2's Undefined. Lists and dicts are
// shared by reference, as in Python, so `ns.items.append(x)` is seen through every alias.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::jinja {

class Value;

// An error inside a builtin or an operator; the interpreter adds the template location.
class RuntimeError : public std::runtime_error {
 public:
  explicit RuntimeError(const std::string& message) : std::runtime_error(message) {}
};

struct List {
  std::vector<Value> items;
  bool is_tuple = false;
  void clear();  // drops the items (ValueArena breaking cycles)
};

// Insertion-ordered string-keyed map; linear lookup is fine for chat-sized dicts.
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // namespace(): the one object `set x.attr = ...` may write to
  const Value* find(const std::string& key) const;
  void set(const std::string& key, Value value);
  void clear();  // drops the entries (ValueArena breaking cycles)
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  const Value* kwarg(const std::string& name) const;
  // The argument at `index` or named `name`; nullptr when absent.
  const Value* get(size_t index, const std::string& name) const;
};

struct Callable {
  std::string name;
  std::function<Value(const CallArgs&)> fn;
  void clear() { fn = nullptr; }  // drops what fn captured, e.g. a macro's closure scope
};

struct None {};
struct Undefined {
  std::string hint;  // jinja2's message when used where a value is required
};

using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<Callable>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kCallable };

  Value() : data_(Undefined{}) {}
  Value(None) : data_(None{}) {}
  Value(Undefined u) : data_(std::move(u)) {}
  Value(bool b) : data_(b) {}
  Value(int i) : data_(int64_t{i}) {}
  Value(int64_t i) : data_(i) {}
  Value(double f) : data_(f) {}
  Value(std::string s) : data_(std::move(s)) {}
  Value(const char* s) : data_(std::string(s)) {}
  Value(ListPtr l) : data_(std::move(l)) {}
  Value(DictPtr d) : data_(std::move(d)) {}
  Value(CallablePtr c) : data_(std::move(c)) {}

  static Value undefined(std::string hint) { return Value(Undefined{std::move(hint)}); }
  static Value list(std::vector<Value> items = {}, bool is_tuple = false);
  static Value dict();
  static Value function(std::string name, std::function<Value(const CallArgs&)> fn);
  // strata::Error for JSON nested more than 256 levels deep.
  static Value from_json(const nlohmann::ordered_json& j);

  Kind kind() const { return static_cast<Kind>(data_.index()); }
  bool is_undefined() const { return kind() == Kind::kUndefined; }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_list() const { return kind() == Kind::kList; }
  bool is_dict() const { return kind() == Kind::kDict; }
  bool is_callable() const { return kind() == Kind::kCallable; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const { return std::get<int64_t>(data_); }
  double as_float() const { return std::get<double>(data_); }
  const std::string& as_string() const { return std::get<std::string>(data_); }
  List& as_list() const { return *std::get<ListPtr>(data_); }
  Dict& as_dict() const { return *std::get<DictPtr>(data_); }
  const Callable& as_callable() const { return *std::get<CallablePtr>(data_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(data_).hint; }

  // Python semantics: truth(), str(), repr(), ==, the numeric value of int/float/bool.
  bool truthy() const;
  std::string str() const;
  std::string repr() const;
  double to_double() const;
  int64_t to_int() const;  // int or bool; caller checks kind
  bool equals(const Value& other) const;
  std::string type_name() const;  // as jinja2 names it in errors: 'dict object', ...

  // Throws RuntimeError with jinja2's "'x' is undefined" when this is Undefined.
  const Value& require_defined() const;
  // Elements in iteration order: list items, dict keys, string characters; Undefined -> empty.
  std::vector<Value> iterate() const;

 private:
  std::variant<Undefined, None, bool, int64_t, double, std::string, ListPtr, DictPtr,
               CallablePtr>
      data_;
};

// Python repr() of a float: shortest round-trip digits, "1.0", "1e-05", "1e+16", "inf".
std::string python_float_repr(double value);

}  // namespace strata::jinja
