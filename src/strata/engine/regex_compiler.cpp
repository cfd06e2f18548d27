#include "strata/engine/regex_compiler.h"

#include "strata/core/error.h"
#include "strata/engine/utf8_ranges.h"

namespace strata {
namespace {

using Sequence = GrammarBuilder::Sequence;
using Range = GrammarBuilder::CodepointRange;
using Kind = GrammarElement::Kind;

const std::vector<Range> kDigit = {{'0', '9'}};
const std::vector<Range> kWord = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<Range> kSpace = {{'\t', '\r'}, {' ', ' '}};

// A recursive-descent parser writing straight into the builder: alternation makes a rule,
// every atom is one element, quantifiers go through GrammarBuilder::repeat.
class RegexParser {
 public:
  RegexParser(std::string_view text, std::string what, GrammarBuilder& b) : text_(text), what_(std::move(what)), b_(b) {}

  int32_t parse() {
    if (!text_.empty() && text_.front() == '^') ++pos_;
    const int32_t root = b_.add_rule(what_);
    alternatives(root);
    if (pos_ < text_.size()) error("unbalanced ')'");
    return root;
  }

 private:
  [[noreturn]] void error(std::string_view problem) const {
    fail("{}: {} at position {} of '{}'", what_, problem, pos_, std::string(text_.substr(0, 200)));
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool at_end_anchor() const { return at('$') && pos_ + 1 == text_.size(); }

  void alternatives(int32_t rule) {
    b_.add_alternative(rule, sequence());
    while (at('|')) {
      ++pos_;
      b_.add_alternative(rule, sequence());
    }
  }

  Sequence sequence() {
    Sequence out;
    while (pos_ < text_.size() && !at('|') && !at(')')) {
      if (at_end_anchor()) {
        ++pos_;
        break;
      }
      Sequence atom_seq = atom();
      atom_seq = quantified(std::move(atom_seq));
      out.insert(out.end(), atom_seq.begin(), atom_seq.end());
    }
    return out;
  }

  Sequence quantified(Sequence item) {
    while (pos_ < text_.size()) {
      int32_t min = 0, max = -1;
      if (at('*')) { ++pos_; }
      else if (at('+')) { ++pos_; min = 1; }
      else if (at('?')) { ++pos_; max = 1; }
      else if (at('{') && counted(min, max)) {}
      else break;
      if (at('?')) ++pos_;  // lazy: the same set of strings
      if (at('*') || at('+')) error("a quantifier follows a quantifier");
      item = b_.repeat(std::move(item), min, max, what_);
    }
    return item;
  }

  // {m}, {m,}, {m,n}; false (nothing read) when the brace is a literal.
  bool counted(int32_t& min, int32_t& max) {
    size_t p = pos_ + 1;
    const auto number = [&](int32_t& v) {
      const size_t begin = p;
      for (v = 0; p < text_.size() && text_[p] >= '0' && text_[p] <= '9' && p - begin < 6; ++p) v = v * 10 + (text_[p] - '0');
      return p > begin;
    };
    if (!number(min)) return false;
    max = min;
    if (p < text_.size() && text_[p] == ',') {
      ++p;
      if (!number(max)) max = -1;
    }
    if (p >= text_.size() || text_[p] != '}') return false;
    pos_ = p + 1;
    return true;
  }

  Sequence atom() {
    const char c = text_[pos_];
    if (c == '(') return group();
    if (c == '[') return bracket();
    if (c == '.') {
      ++pos_;
      return b_.codepoint_class({{'\n', '\n'}}, /*negated=*/true, what_);
    }
    if (c == '*' || c == '+' || c == '?') error("a quantifier has nothing to repeat");
    if (c == '^' || c == '$') error("anchors are only allowed at the start (^) and end ($)");
    if (c == '\\') return escape_atom();
    return b_.literal(utf8_encode(class_codepoint()));  // a whole code point, so x+ repeats all its bytes
  }

  Sequence group() {
    ++pos_;
    if (at('?')) {
      if (text_.substr(pos_, 2) == "?:") pos_ += 2;
      else if (text_.substr(pos_, 3) == "?P<" || (text_.substr(pos_, 2) == "?<" && text_.substr(pos_, 3) != "?<=" &&
                                                 text_.substr(pos_, 3) != "?<!"))
        pos_ = skip_group_name();
      else error("lookaround and inline flags ((?=, (?!, (?<=, (?i) ...) are not supported");
    }
    const int32_t rule = b_.add_rule(what_ + "/group");
    alternatives(rule);
    if (!at(')')) error("missing ')'");
    ++pos_;
    return {{.kind = Kind::kRule, .value = rule}};
  }

  size_t skip_group_name() {
    const size_t close = text_.find('>', pos_);
    if (close == std::string_view::npos) error("a group name has no closing '>'");
    return close + 1;
  }

  Sequence escape_atom() {
    std::vector<Range> ranges;
    bool negated = false;
    if (class_escape(ranges, negated)) return b_.codepoint_class(std::move(ranges), negated, what_);
    return b_.literal(utf8_encode(escaped_codepoint()));
  }

  // \d \w \s and their negations; false when the escape is something else (pos_ unmoved).
  bool class_escape(std::vector<Range>& ranges, bool& negated) {
    if (pos_ + 1 >= text_.size()) error("a pattern ends in a lone backslash");
    const char e = text_[pos_ + 1];
    const char lower = static_cast<char>(e | 0x20);
    if (lower != 'd' && lower != 'w' && lower != 's') return false;
    pos_ += 2;
    ranges = lower == 'd' ? kDigit : (lower == 'w' ? kWord : kSpace);
    negated = e != lower;
    return true;
  }

  uint32_t hex(size_t digits) {
    if (pos_ + digits > text_.size()) error("a \\x or \\u escape is cut short");
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char h = text_[pos_++];
      const int d = h >= '0' && h <= '9' ? h - '0' : ((h | 0x20) >= 'a' && (h | 0x20) <= 'f' ? (h | 0x20) - 'a' + 10 : -1);
      if (d < 0) error("a \\x or \\u escape needs hex digits");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // After a backslash that is not a class: the code point it stands for.
  uint32_t escaped_codepoint() {
    ++pos_;
    const char e = text_[pos_++];
    switch (e) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case '0': return 0;
      case 'x': return hex(2);
      case 'u': return hex(4);
      default: break;
    }
    if ((e >= '1' && e <= '9') || e == 'b' || e == 'B' || e == 'A' || e == 'Z' || e == 'z' || e == 'k')
      error("backreferences and word-boundary or anchor escapes are not supported");
    if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) error("an unknown escape");
    return static_cast<unsigned char>(e);
  }

  // One code point of a class, decoding UTF-8.
  uint32_t class_codepoint() {
    if (at('\\')) return escaped_codepoint();
    const auto lead = static_cast<unsigned char>(text_[pos_++]);
    const int extra = lead >= 0xF0 ? 3 : (lead >= 0xE0 ? 2 : (lead >= 0xC0 ? 1 : 0));
    uint32_t cp = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int i = 0; i < extra; ++i) {
      if (pos_ >= text_.size()) error("a character class holds broken UTF-8");
      cp = (cp << 6) | (static_cast<unsigned char>(text_[pos_++]) & 0x3F);
    }
    return cp;
  }

  Sequence bracket() {
    ++pos_;
    const bool negated = at('^');
    if (negated) ++pos_;
    std::vector<Range> ranges;
    for (bool first = true; first || !at(']'); first = false) {
      if (pos_ >= text_.size()) error("missing ']'");
      std::vector<Range> escaped;
      bool escaped_negated = false;
      if (at('\\') && class_escape(escaped, escaped_negated)) {
        if (escaped_negated) error("\\D, \\W and \\S are not supported inside [...]");
        ranges.insert(ranges.end(), escaped.begin(), escaped.end());
        continue;
      }
      const uint32_t lo = class_codepoint();
      uint32_t hi = lo;
      if (at('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        hi = class_codepoint();
        if (hi < lo) error("a character range is out of order");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    return b_.codepoint_class(std::move(ranges), negated, what_);
  }

  std::string_view text_;
  std::string what_;
  GrammarBuilder& b_;
  size_t pos_ = 0;
};

}  // namespace

std::shared_ptr<const CompiledGrammar> compile_regex(std::string_view pattern, const std::string& what) {
  GrammarBuilder builder;
  const int32_t root = RegexParser(pattern, what, builder).parse();
  return builder.finish(root, what);
}

std::shared_ptr<const CompiledGrammar> compile_choice(const std::vector<std::string>& choices) {
  if (choices.empty()) fail("choice: give at least one choice");
  GrammarBuilder builder;
  const int32_t root = builder.add_rule("choice");
  for (const std::string& c : choices) {
    if (c.empty()) fail("choice: a choice is an empty string; every choice needs at least one character");
    builder.add_alternative(root, builder.literal(c));
  }
  return builder.finish(root, "choice");
}

}  // namespace strata
