#include "strata/server/tool_parsers/call_arguments.h"

#include "strata/engine/json_grammar.h"
#include "strata/server/tool_parsers/parse_helpers.h"

namespace strata::server {
namespace {

constexpr size_t kNone = std::string_view::npos;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The length of `text` without a trailing UTF-8 character that is not whole yet.
size_t whole_utf8_length(std::string_view text) {
  size_t lead = text.size();
  for (size_t back = 0; back < 4 && lead > 0; ++back) {
    const auto c = static_cast<unsigned char>(text[--lead]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: the lead is further back
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return text.size() - lead >= need ? text.size() : lead;
  }
  return text.size();
}

// From a string's opening quote: the position after its closing quote (npos while open).
size_t string_end(std::string_view text, size_t quote) {
  for (size_t i = quote + 1; i < text.size(); ++i) {
    if (text[i] == '\\') ++i;
    else if (text[i] == '"') return i + 1;
  }
  return kNone;
}

// From a value's first byte: the position after it (npos while it may still grow).
size_t value_end(std::string_view text, size_t begin) {
  if (text[begin] == '"') return string_end(text, begin);
  if (text[begin] == '{' || text[begin] == '[') {
    const size_t length = json_value_length(text.substr(begin));
    return length == kNone ? kNone : begin + length;
  }
  return text.find_first_of(",}] \t\r\n", begin);
}

std::optional<std::string> string_value(std::string_view token) {
  const std::optional<nlohmann::ordered_json> j = parse_model_json(token);
  if (!j || !j->is_string()) return std::nullopt;
  return j->get<std::string>();
}

// The JSON recogniser's walk over an object's text, dropping the blanks outside strings.
struct PrefixWalk {
  std::string raw;           // the bytes walked (a refused one included: the walk ends there)
  JsonGrammar grammar;
  bool in_string = false;
  bool escaped = false;
  bool stopped = false;      // refused a byte, or the object closed
  ArgumentsPrefix out;       // the compact text so far (a split UTF-8 character not yet trimmed)

  void step(char c) {
    raw.push_back(c);
    if (!grammar.feed(static_cast<unsigned char>(c))) {
      stopped = true;
      return;
    }
    if (in_string || !is_blank(c)) out.text.push_back(c);
    if (escaped) escaped = false;
    else if (in_string && c == '\\') escaped = true;
    else if (c == '"') in_string = !in_string;
    stopped = out.closed = grammar.done();
  }
};

struct ObjectField {
  std::string key;
  size_t value_begin = 0;
  size_t value_end = kNone;  // npos: not whole yet
};

// The top-level fields of the object `text` opens with, as far as they have come.
std::vector<ObjectField> object_fields(std::string_view text) {
  std::vector<ObjectField> fields;
  size_t at = skip_blank(text, 1);
  while (at < text.size() && text[at] == '"') {
    const size_t key_end = string_end(text, at);
    if (key_end == kNone) break;
    std::optional<std::string> key = string_value(text.substr(at, key_end - at));
    const size_t colon = skip_blank(text, key_end);
    if (!key || colon >= text.size() || text[colon] != ':') break;
    const size_t begin = skip_blank(text, colon + 1);
    if (begin >= text.size()) break;
    fields.push_back({.key = std::move(*key), .value_begin = begin, .value_end = value_end(text, begin)});
    if (fields.back().value_end == kNone) break;
    const size_t next = skip_blank(text, fields.back().value_end);
    if (next >= text.size() || text[next] != ',') break;
    at = skip_blank(text, next + 1);
  }
  return fields;
}

const ObjectField* first_field(const std::vector<ObjectField>& fields, std::string_view a, std::string_view b = {}) {
  for (const ObjectField& f : fields)
    if (f.key == a || (!b.empty() && f.key == b)) return &f;
  return nullptr;
}

// The name a whole name field holds; nullopt when it is not a non-empty string.
std::optional<std::string> field_name(std::string_view text, const ObjectField* f) {
  if (f == nullptr || f->value_end == kNone || text[f->value_begin] != '"') return std::nullopt;
  std::optional<std::string> name = string_value(text.substr(f->value_begin, f->value_end - f->value_begin));
  if (!name || name->empty()) return std::nullopt;
  return name;
}

}  // namespace

ArgumentsPrefix arguments_prefix(std::string_view raw) {
  // A stream asks again with the same text grown: the walk resumes where it stopped, so a
  // long call costs linear time, not quadratic. Any other text starts a new walk.
  thread_local PrefixWalk walk;
  if (!raw.starts_with(walk.raw)) walk = PrefixWalk{};
  for (size_t i = walk.raw.size(); i < raw.size() && !walk.stopped; ++i) walk.step(raw[i]);
  ArgumentsPrefix out = walk.out;
  if (!out.closed) out.text.resize(whole_utf8_length(out.text));
  return out;
}

std::string compact_json(std::string_view raw) {
  std::string out;
  bool in_string = false, escaped = false;
  for (const char c : raw) {
    if (in_string || !is_blank(c)) out.push_back(c);
    if (escaped) escaped = false;
    else if (in_string && c == '\\') escaped = true;
    else if (c == '"') in_string = !in_string;
  }
  return out;
}

std::optional<ToolCall> call_from_object_text(const ToolParser& parser, std::string_view text,
                                              bool require_arguments) {
  text = trim_blank(text);
  const std::optional<nlohmann::ordered_json> j = parse_model_json(text);
  if (!j || !j->is_object()) return std::nullopt;
  const std::vector<ObjectField> fields = object_fields(text);
  std::optional<std::string> name = field_name(text, first_field(fields, "name"));
  if (!name) return std::nullopt;
  const ObjectField* args = first_field(fields, "arguments", "parameters");
  if (args == nullptr && require_arguments) return std::nullopt;
  std::string arguments = "{}";
  if (args != nullptr) {
    const std::string_view value = text.substr(args->value_begin, args->value_end - args->value_begin);
    if (value.front() == '{') arguments = compact_json(value);
    else if (value.front() == '"') arguments = *string_value(value);
    else if (value != "null") return std::nullopt;
  }
  return ToolCall{.id = parser.make_call_id(), .name = std::move(*name), .arguments = std::move(arguments)};
}

std::optional<PartialCall> partial_call_object(std::string_view text) {
  const std::vector<ObjectField> fields = object_fields(text);
  std::optional<std::string> name = field_name(text, first_field(fields, "name"));
  const ObjectField* args = first_field(fields, "arguments", "parameters");
  if (!name || args == nullptr || std::string_view("{\"n").find(text[args->value_begin]) == std::string_view::npos)
    return std::nullopt;
  PartialCall call{.name = std::move(*name)};
  const std::string_view value = text.substr(args->value_begin);
  if (value.front() == '{') {
    call.arguments = arguments_prefix(value).text;
  } else if (args->value_end != kNone) {
    const std::string_view whole = value.substr(0, args->value_end - args->value_begin);
    if (whole == "null") call.arguments = "{}";
    else if (whole.front() == '"') call.arguments = string_value(whole).value_or("");
  }
  return call;
}

}  // namespace strata::server
