#include "strata/engine/json_schema_keywords.h"

#include <cmath>
#include <string_view>

#include "strata/core/error.h"
#include "strata/engine/regex_compiler.h"

namespace strata::json_schema_keywords {
namespace {

using Json = nlohmann::ordered_json;

const char* const kStringKeywords[] = {"minLength", "maxLength", "pattern", "format"};
const char* const kNumberKeywords[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
const char* const kArrayKeywords[] = {"minItems", "maxItems"};

// Each format as a regex over the string's text (RFC 3339 dates and times; a practical
// e-mail shape; dotted-quad IPv4).
constexpr std::string_view kDate = R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))";
constexpr std::string_view kTime = R"(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))";
constexpr std::string_view kOctet = R"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))";

std::string format_regex(const std::string& format) {
  if (format == "date") return std::string(kDate);
  if (format == "time") return std::string(kTime);
  if (format == "date-time") return std::string(kDate) + "T" + std::string(kTime);
  if (format == "uuid") return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
  if (format == "email") return R"([A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+)";
  if (format == "ipv4") return "(" + std::string(kOctet) + R"(\.){3})" + std::string(kOctet);
  fail("json_schema: format '{}' is not supported; supported formats: {}", format, kFormats);
}

template <size_t N>
const char* first_present(const Json& s, const char* const (&keywords)[N]) {
  for (const char* k : keywords)
    if (s.contains(k)) return k;
  return nullptr;
}

uint32_t read_count(const Json& s, const char* key) {
  const Json& v = s[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 100000)
    fail("json_schema: '{}' must be an integer from 0 to 100000, got {}", key, v.dump());
  return static_cast<uint32_t>(v.get<int64_t>());
}

double read_bound(const Json& s, const char* key) {
  const Json& v = s[key];
  if (!v.is_number())
    fail("json_schema: '{}' must be a number (draft 2020-12; the boolean exclusiveMinimum of draft 4 is not "
         "supported), got {}", key, v.dump());
  return v.get<double>();
}

int64_t clamp_bound(double v) {
  const double limit = static_cast<double>(NumberBounds::kLimit);
  return static_cast<int64_t>(std::clamp(v, -limit, limit));
}

}  // namespace

const char* const kFormats = "date, time, date-time, uuid, email, ipv4";

void check_types(const Json& s) {
  const std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
  const bool choice = s.contains("enum") || s.contains("const");
  const auto refuse = [&](const char* keyword, const char* needs) {
    if (keyword == nullptr) return;
    if (choice) fail("json_schema: '{}' beside enum or const is not supported; the listed values are the only ones", keyword);
    fail("json_schema: '{}' needs \"type\": \"{}\" in the same schema (a list of types or no type is not supported "
         "with it; use anyOf)", keyword, needs);
  };
  if (type != "string" || choice) refuse(first_present(s, kStringKeywords), "string");
  if ((type != "number" && type != "integer") || choice) refuse(first_present(s, kNumberKeywords), "number or integer");
  if (type != "array" || choice) refuse(first_present(s, kArrayKeywords), "array");
}

void read_string(const Json& s, CompiledSchema::Node& node) {
  if (s.contains("minLength")) node.min_length = read_count(s, "minLength");
  if (s.contains("maxLength")) node.max_length = read_count(s, "maxLength");
  if (node.min_length > node.max_length)
    fail("json_schema: minLength {} is above maxLength {}", node.min_length, node.max_length);
  if (s.contains("pattern") && s.contains("format"))
    fail("json_schema: give 'pattern' or 'format', not both, in one string schema");
  if (s.contains("pattern")) {
    if (!s["pattern"].is_string()) fail("json_schema: 'pattern' must be a string (a regex)");
    node.pattern = compile_regex(s["pattern"].get<std::string>(), "json_schema pattern");
  } else if (s.contains("format")) {
    if (!s["format"].is_string()) fail("json_schema: 'format' must be a string, one of {}", kFormats);
    node.pattern = compile_regex(format_regex(s["format"].get<std::string>()), "json_schema format");
  }
}

// Integers: the exact range. Numbers: the sign, and the integer part within the bounds'
// integer parts (a fraction is not compared: 5.9 passes a maximum of 5.5).
void read_number(const Json& s, CompiledSchema::Node& node) {
  NumberBounds& b = node.bounds;
  b.integer = node.kind == CompiledSchema::Kind::kInteger;
  const auto bound = [&](const char* key) { return s.contains(key) ? std::optional(read_bound(s, key)) : std::nullopt; };
  const std::optional<double> min = bound("minimum"), max = bound("maximum");
  const std::optional<double> xmin = bound("exclusiveMinimum"), xmax = bound("exclusiveMaximum");
  if (b.integer) {
    if (min) b.lo = std::max(b.lo, clamp_bound(std::ceil(*min)));
    if (xmin) b.lo = std::max(b.lo, clamp_bound(std::floor(*xmin) + 1));
    if (max) b.hi = std::min(b.hi, clamp_bound(std::floor(*max)));
    if (xmax) b.hi = std::min(b.hi, clamp_bound(std::ceil(*xmax) - 1));
    if (b.lo > b.hi) fail("json_schema: no integer lies within the schema's minimum and maximum");
    b.negative = b.lo < 0;
    b.non_negative = b.hi >= 0;
    return;
  }
  const std::optional<double> lo = min ? min : xmin, hi = max ? max : xmax;
  if (min && xmin) fail("json_schema: give 'minimum' or 'exclusiveMinimum', not both");
  if (max && xmax) fail("json_schema: give 'maximum' or 'exclusiveMaximum', not both");
  if (lo && hi && *lo > *hi) fail("json_schema: minimum {} is above maximum {}", *lo, *hi);
  if (lo) b.lo = clamp_bound(std::trunc(*lo));
  if (hi) b.hi = clamp_bound(std::trunc(*hi));
  b.negative = !lo || *lo < 0;
  b.non_negative = !hi || *hi > 0 || (*hi == 0 && max);
}

void read_array(const Json& s, CompiledSchema::Node& node) {
  if (s.contains("minItems")) node.min_items = read_count(s, "minItems");
  if (s.contains("maxItems")) node.max_items = read_count(s, "maxItems");
  if (node.min_items > node.max_items)
    fail("json_schema: minItems {} is above maxItems {}", node.min_items, node.max_items);
}

}  // namespace strata::json_schema_keywords
