#include "strata/engine/gbnf_compiler.h"

#include <map>

#include "strata/core/error.h"
#include "strata/engine/utf8_ranges.h"

namespace strata {
namespace {

using Sequence = GrammarBuilder::Sequence;
using Range = GrammarBuilder::CodepointRange;
using Kind = GrammarElement::Kind;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class GbnfParser {
 public:
  GbnfParser(std::string_view text, GrammarBuilder& b) : text_(text), b_(b) {}

  int32_t parse() {
    skip_space();
    if (pos_ >= text_.size()) fail("grammar: the grammar is empty; it needs at least `root ::= ...`");
    while (pos_ < text_.size()) rule();
    for (const auto& [name, rule] : rules_)
      if (!defined_[rule]) fail("grammar: rule '{}' is used but never defined", name);
    const auto root = rules_.find("root");
    if (root == rules_.end()) fail("grammar: there is no 'root' rule; the grammar starts at `root ::= ...`");
    return root->second;
  }

 private:
  [[noreturn]] void error(std::string_view problem) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i, ++column)
      if (text_[i] == '\n') line += 1, column = 0;
    fail("grammar: {} at line {} column {}", problem, line, column);
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }

  void skip_space() {
    while (pos_ < text_.size()) {
      if (text_[pos_] == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r') {
        ++pos_;
      } else {
        return;
      }
    }
  }

  std::string name() {
    const size_t begin = pos_;
    while (pos_ < text_.size() && is_name_char(text_[pos_])) ++pos_;
    if (pos_ == begin) error("expected a rule name");
    return std::string(text_.substr(begin, pos_ - begin));
  }

  // Whether a `name ::=` starts here (the end of the rule before it).
  bool at_rule_start() const {
    size_t p = pos_;
    while (p < text_.size() && is_name_char(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p, 3) == "::=";
  }

  int32_t rule_id(const std::string& n) {
    const auto [it, inserted] = rules_.try_emplace(n, 0);
    if (inserted) {
      it->second = b_.add_rule(n);
      defined_.resize(static_cast<size_t>(b_.num_rules()), false);
    }
    return it->second;
  }

  void rule() {
    const std::string n = name();
    skip_space();
    if (text_.substr(pos_, 3) != "::=") error(fmt::format("expected '::=' after the rule name '{}'", n));
    pos_ += 3;
    const int32_t id = rule_id(n);
    current_ = n;
    if (defined_[id]) error(fmt::format("rule '{}' is defined twice", n));
    defined_[id] = true;
    alternatives(id, /*nested=*/false);
  }

  void alternatives(int32_t rule, bool nested) {
    b_.add_alternative(rule, sequence(nested));
    while (at('|')) {
      ++pos_;
      b_.add_alternative(rule, sequence(nested));
    }
  }

  Sequence sequence(bool nested) {
    Sequence out;
    for (skip_space(); pos_ < text_.size() && !at('|') && !at(')'); skip_space()) {
      if (!nested && at_rule_start()) break;
      Sequence term = postfix(primary());
      out.insert(out.end(), term.begin(), term.end());
    }
    if (at(')') && !nested) error("unbalanced ')'");
    return out;
  }

  Sequence primary() {
    const char c = text_[pos_];
    if (c == '"') return quoted();
    if (c == '[') return bracket();
    if (c == '.') {
      ++pos_;
      return b_.codepoint_class({}, /*negated=*/true, "grammar");
    }
    if (c == '(') {
      ++pos_;
      const int32_t group = b_.add_rule(current_ + "/group");
      alternatives(group, /*nested=*/true);
      skip_space();
      if (!at(')')) error("missing ')'");
      ++pos_;
      return {{.kind = Kind::kRule, .value = group}};
    }
    if (is_name_char(c)) {
      const std::string n = name();
      return {{.kind = Kind::kRule, .value = rule_id(n)}};
    }
    error(fmt::format("unexpected character '{}'", c));
  }

  Sequence postfix(Sequence item) {
    while (pos_ < text_.size()) {
      int32_t min = 0, max = -1;
      if (at('*')) { ++pos_; }
      else if (at('+')) { ++pos_; min = 1; }
      else if (at('?')) { ++pos_; max = 1; }
      else if (at('{')) counted(min, max);
      else break;
      item = b_.repeat(std::move(item), min, max, "grammar");
    }
    return item;
  }

  void counted(int32_t& min, int32_t& max) {
    ++pos_;
    const auto number = [&](int32_t& v) {
      skip_space();
      const size_t begin = pos_;
      for (v = 0; pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9' && pos_ - begin < 6; ++pos_)
        v = v * 10 + (text_[pos_] - '0');
      skip_space();
      return pos_ > begin;
    };
    if (!number(min)) error("expected a number after '{'");
    max = min;
    if (at(',')) {
      ++pos_;
      if (!number(max)) max = -1;
    }
    if (!at('}')) error("expected '}' to close a repetition");
    ++pos_;
  }

  uint32_t hex(size_t digits) {
    uint32_t v = 0;
    for (size_t i = 0; i < digits; ++i, ++pos_) {
      const char h = pos_ < text_.size() ? static_cast<char>(text_[pos_] | 0x20) : 0;
      const int d = h >= '0' && h <= '9' ? h - '0' : (h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1);
      if (d < 0) error(fmt::format("expected {} hex digits in an escape", digits));
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }

  // One code point of a literal or class (UTF-8 decoded, escapes read).
  uint32_t codepoint() {
    if (pos_ >= text_.size()) error("a string or class is not closed");
    if (at('\\')) {
      if (++pos_ >= text_.size()) error("a lone backslash ends the grammar");
      const char e = text_[pos_++];
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case 'x': return hex(2);
        case 'u': return hex(4);
        case 'U': return hex(8);
        default: break;
      }
      if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))
        error(fmt::format("unknown escape '\\{}'", e));
      return static_cast<unsigned char>(e);
    }
    const auto lead = static_cast<unsigned char>(text_[pos_++]);
    const int extra = lead >= 0xF0 ? 3 : (lead >= 0xE0 ? 2 : (lead >= 0xC0 ? 1 : 0));
    uint32_t cp = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int i = 0; i < extra && pos_ < text_.size(); ++i) cp = (cp << 6) | (static_cast<unsigned char>(text_[pos_++]) & 0x3F);
    return cp;
  }

  Sequence quoted() {
    ++pos_;
    std::string bytes;
    while (!at('"')) {
      if (pos_ >= text_.size() || at('\n')) error("a string literal is not closed");
      bytes += utf8_encode(codepoint());
    }
    ++pos_;
    return b_.literal(bytes);  // "" is the empty sequence
  }

  Sequence bracket() {
    ++pos_;
    const bool negated = at('^');
    if (negated) ++pos_;
    std::vector<Range> ranges;
    while (!at(']')) {
      if (pos_ >= text_.size()) error("missing ']'");
      const uint32_t lo = codepoint();
      uint32_t hi = lo;
      if (at('-') && pos_ + 1 < text_.size() && text_[pos_ + 1] != ']') {
        ++pos_;
        hi = codepoint();
        if (hi < lo) error("a character range is out of order");
      }
      ranges.push_back({lo, hi});
    }
    ++pos_;
    if (ranges.empty() && !negated) error("an empty character class [] matches nothing");
    return b_.codepoint_class(std::move(ranges), negated, "grammar");
  }

  std::string_view text_;
  GrammarBuilder& b_;
  size_t pos_ = 0;
  std::map<std::string, int32_t> rules_;
  std::vector<bool> defined_;
  std::string current_;  // the rule being read, to name its groups
};

}  // namespace

std::shared_ptr<const CompiledGrammar> compile_gbnf(std::string_view text) {
  GrammarBuilder builder;
  const int32_t root = GbnfParser(text, builder).parse();
  return builder.finish(root, "grammar");
}

}  // namespace strata
