// json.dumps for Values. Undefined and callables are not serialisable, as in Python.
#include "strata/text/jinja/pyjson.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace strata::jinja {
namespace {

constexpr int kMaxJsonDepth = 200;

// Decodes one UTF-8 code point at s[i]; returns its length in bytes (1 for a stray byte).
size_t decode_utf8(const std::string& s, size_t i, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (i + n > s.size()) n = 1;
  *cp = n == 1 ? c : c & (0xFF >> (n + 1));
  for (size_t k = 1; k < n; ++k) *cp = (*cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return n;
}

void dump_string(const std::string& s, bool ensure_ascii, std::string& out) {
  out += '"';
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; ++i; continue;
      case '\\': out += "\\\\"; ++i; continue;
      case '\n': out += "\\n"; ++i; continue;
      case '\r': out += "\\r"; ++i; continue;
      case '\t': out += "\\t"; ++i; continue;
      case '\b': out += "\\b"; ++i; continue;
      case '\f': out += "\\f"; ++i; continue;
      default: break;
    }
    if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
      ++i;
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
      ++i;
    } else {
      uint32_t cp = 0;
      i += decode_utf8(s, i, &cp);
      if (cp >= 0x10000) {
        cp -= 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", cp);
      }
    }
  }
  out += '"';
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& options) : options_(options) {}

  void dump(const Value& v, int depth, std::string& out) const {
    if (depth > kMaxJsonDepth) throw RuntimeError("tojson: value nested too deeply");
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
      case Value::Kind::kFloat: {
        const double f = v.as_float();
        out += std::isnan(f) ? "NaN" : std::isinf(f) ? (f > 0 ? "Infinity" : "-Infinity")
                                                     : v.str();
        return;
      }
      case Value::Kind::kString: dump_string(v.as_string(), options_.ensure_ascii, out); return;
      case Value::Kind::kList: dump_list(v.as_list(), depth, out); return;
      case Value::Kind::kDict:
        if (!v.as_dict().is_namespace) {
          dump_dict(v.as_dict(), depth, out);
          return;
        }
        break;
      default: break;
    }
    throw RuntimeError(fmt::format("Object of type {} is not JSON serializable", v.type_name()));
  }

 private:
  void newline(int depth, std::string& out) const {
    out += '\n';
    for (int i = 0; i < depth; ++i) out += *options_.indent;
  }

  void dump_list(const List& l, int depth, std::string& out) const {
    if (l.items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (size_t i = 0; i < l.items.size(); ++i) {
      if (i) out += options_.item_separator;
      if (options_.indent) newline(depth + 1, out);
      dump(l.items[i], depth + 1, out);
    }
    if (options_.indent) newline(depth, out);
    out += ']';
  }

  void dump_dict(const Dict& d, int depth, std::string& out) const {
    if (d.items.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value>*> items;
    for (const auto& item : d.items) items.push_back(&item);
    if (options_.sort_keys) {
      std::stable_sort(items.begin(), items.end(),
                       [](auto* a, auto* b) { return a->first < b->first; });
    }
    out += '{';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out += options_.item_separator;
      if (options_.indent) newline(depth + 1, out);
      dump_string(items[i]->first, options_.ensure_ascii, out);
      out += options_.key_separator;
      dump(items[i]->second, depth + 1, out);
    }
    if (options_.indent) newline(depth, out);
    out += '}';
  }

  const JsonDumpOptions& options_;
};

}  // namespace

std::string python_json_dumps(const Value& value, const JsonDumpOptions& options) {
  std::string out;
  Dumper(options).dump(value, 0, out);
  return out;
}

}  // namespace strata::jinja
