// Collection filters: length, join, first/last, list, items, map, select/reject(attr), sort,
// dictsort, unique, reverse, min/max/sum.
#include <algorithm>

#include <fmt/format.h>

#include "strata/text/jinja/builtins.h"
#include "strata/text/jinja/methods.h"
#include "strata/text/jinja/operators.h"
#include "strata/text/jinja/utf8.h"

namespace strata::jinja {

size_t python_len(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return utf8_length(value.as_string());
    case Value::Kind::kList: return value.as_list().items.size();
    case Value::Kind::kDict:
      if (!value.as_dict().is_namespace) return value.as_dict().items.size();
      break;
    default: break;
  }
  throw RuntimeError(fmt::format("object of type '{}' has no len()", value.type_name()));
}

Value resolve_attribute_path(const Value& value, const std::string& path) {
  Value current = value;
  static const std::string kDot = ".";
  for (const std::string& part : python_split(path, &kDot, -1)) {
    const bool is_index = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    current = get_item(current, is_index ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
  }
  return current;
}

namespace {

// The positional arguments from `first` on, with the keyword ones, for a test or filter.
CallArgs tail_args(const CallArgs& args, size_t first) {
  CallArgs out;
  for (size_t i = first; i < args.positional.size(); ++i) out.positional.push_back(args.positional[i]);
  out.keyword = args.keyword;
  return out;
}

// select/reject/selectattr/rejectattr share jinja2's select_or_reject.
Value select_or_reject(const Value& value, const CallArgs& args, bool use_attr, bool keep) {
  std::string attr;
  size_t next = 0;
  if (use_attr) {
    const std::string* a = string_arg(args, 0, "attribute", "selectattr");
    if (!a) throw RuntimeError("selectattr/rejectattr need an attribute name");
    attr = *a;
    next = 1;
  }
  const std::string* test = next < args.positional.size() ? string_arg(args, next, "", "select") : nullptr;
  const CallArgs test_args = tail_args(args, next + 1);
  std::vector<Value> out;
  for (const Value& item : value.iterate()) {
    const Value subject = use_attr ? resolve_attribute_path(item, attr) : item;
    const bool passed = test ? apply_test(*test, subject, test_args) : subject.truthy();
    if (passed == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value filter_map(const Value& value, const CallArgs& args) {
  std::vector<Value> out;
  if (const Value* attr = args.kwarg("attribute")) {
    const Value* dflt = args.kwarg("default");
    for (const Value& item : value.iterate()) {
      Value v = resolve_attribute_path(item, attr->str());
      out.push_back(v.is_undefined() && dflt ? *dflt : v);
    }
    return Value::list(std::move(out));
  }
  const std::string* filter = string_arg(args, 0, "", "map");
  if (!filter) throw RuntimeError("map needs a filter name or attribute=");
  const CallArgs filter_args = tail_args(args, 1);
  for (const Value& item : value.iterate()) out.push_back(apply_filter(*filter, item, filter_args));
  return Value::list(std::move(out));
}

// The sort key jinja2 uses: the attribute if given, strings lowered unless case_sensitive.
Value sort_key(const Value& item, const std::string* attribute, bool case_sensitive) {
  Value key = attribute ? resolve_attribute_path(item, *attribute) : item;
  if (!case_sensitive && key.is_string()) return Value(ascii_lower(key.as_string()));
  return key;
}

Value filter_sort(const Value& value, const CallArgs& args) {
  const bool reverse = bool_arg(args, 0, "reverse", false);
  const bool case_sensitive = bool_arg(args, 1, "case_sensitive", false);
  const std::string* attribute = string_arg(args, 2, "attribute", "sort");
  std::vector<std::pair<Value, Value>> keyed;
  for (const Value& item : value.iterate()) {
    keyed.emplace_back(sort_key(item, attribute, case_sensitive), item);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    return reverse ? python_less(b.first, a.first) : python_less(a.first, b.first);
  });
  std::vector<Value> out;
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return Value::list(std::move(out));
}

Value filter_dictsort(const Value& value, const CallArgs& args) {
  if (!value.is_dict()) throw RuntimeError("dictsort needs a dict, not " + value.type_name());
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  const std::string* by = string_arg(args, 1, "by", "dictsort");
  const bool reverse = bool_arg(args, 2, "reverse", false);
  const bool by_value = by && *by == "value";
  if (by && !by_value && *by != "key") throw RuntimeError("dictsort: 'by' must be 'key' or 'value'");
  std::vector<Value> pairs;
  for (const auto& [k, v] : value.as_dict().items) pairs.push_back(Value::list({Value(k), v}, true));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(a.as_list().items[by_value ? 1 : 0], nullptr, case_sensitive);
    const Value kb = sort_key(b.as_list().items[by_value ? 1 : 0], nullptr, case_sensitive);
    return reverse ? python_less(kb, ka) : python_less(ka, kb);
  });
  return Value::list(std::move(pairs));
}

Value filter_unique(const Value& value, const CallArgs& args) {
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  const std::string* attribute = string_arg(args, 1, "attribute", "unique");
  std::vector<Value> seen, out;
  for (const Value& item : value.iterate()) {
    const Value key = sort_key(item, attribute, case_sensitive);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return s.equals(key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::list(std::move(out));
}

Value filter_min_max(const Value& value, const CallArgs& args, bool want_max) {
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive", false);
  const std::string* attribute = string_arg(args, 1, "attribute", want_max ? "max" : "min");
  const std::vector<Value> items = value.iterate();
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    const Value a = sort_key(items[i], attribute, case_sensitive);
    const Value b = sort_key(items[best], attribute, case_sensitive);
    if (want_max ? python_less(b, a) : python_less(a, b)) best = i;
  }
  return items[best];
}

Value filter_sum(const Value& value, const CallArgs& args) {
  const std::string* attribute = string_arg(args, 0, "attribute", "sum");
  const Value* start = args.get(1, "start");
  Value total = start ? *start : Value(int64_t{0});
  for (const Value& item : value.iterate()) {
    total = binary_op("+", total, attribute ? resolve_attribute_path(item, *attribute) : item);
  }
  return total;
}

Value filter_join(const Value& value, const CallArgs& args) {
  const std::string* sep = string_arg(args, 0, "d", "join");
  const std::string* attribute = string_arg(args, 1, "attribute", "join");
  std::string out;
  bool first = true;
  for (const Value& item : value.iterate()) {
    if (!first && sep) out += *sep;
    out += (attribute ? resolve_attribute_path(item, *attribute) : item).str();
    first = false;
  }
  return Value(std::move(out));
}

Value filter_items(const Value& value) {
  if (value.is_undefined()) return Value::list();
  if (!value.is_dict()) throw RuntimeError("items needs a dict, not " + value.type_name());
  std::vector<Value> out;
  for (const auto& [k, v] : value.as_dict().items) out.push_back(Value::list({Value(k), v}, true));
  return Value::list(std::move(out));
}

Value first_or_last(const Value& value, bool first) {
  const std::vector<Value> items = value.iterate();
  if (items.empty()) {
    return Value::undefined(fmt::format("No {} item, sequence was empty.", first ? "first" : "last"));
  }
  return first ? items.front() : items.back();
}

}  // namespace

bool apply_sequence_filter(const std::string& name, const Value& value, const CallArgs& args,
                           Value* result) {
  if (name == "length" || name == "count") *result = Value(static_cast<int64_t>(python_len(value)));
  else if (name == "join") *result = filter_join(value, args);
  else if (name == "first" || name == "last") *result = first_or_last(value, name == "first");
  else if (name == "list") *result = Value::list(value.iterate());
  else if (name == "items") *result = filter_items(value);
  else if (name == "map") *result = filter_map(value, args);
  else if (name == "select" || name == "reject") *result = select_or_reject(value, args, false, name == "select");
  else if (name == "selectattr" || name == "rejectattr") {
    *result = select_or_reject(value, args, true, name == "selectattr");
  } else if (name == "sort") *result = filter_sort(value, args);
  else if (name == "dictsort") *result = filter_dictsort(value, args);
  else if (name == "unique") *result = filter_unique(value, args);
  else if (name == "min" || name == "max") *result = filter_min_max(value, args, name == "max");
  else if (name == "sum") *result = filter_sum(value, args);
  else if (name == "reverse") {
    std::vector<Value> items = value.iterate();
    std::reverse(items.begin(), items.end());
    if (value.is_string()) {
      std::string s;
      for (const Value& c : items) s += c.as_string();
      *result = Value(std::move(s));
    } else {
      *result = Value::list(std::move(items));
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace strata::jinja
