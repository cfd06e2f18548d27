// GrammarBuilder: sequences, code point classes and repetition to byte-level rules.
#include <algorithm>

#include "strata/core/error.h"
#include "strata/engine/grammar.h"
#include "strata/engine/utf8_ranges.h"

namespace strata {
namespace {

using Kind = GrammarElement::Kind;
constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// Sorted, merged ranges; their complement when negated.
std::vector<GrammarBuilder::CodepointRange> normalise(std::vector<GrammarBuilder::CodepointRange> ranges,
                                                      bool negated) {
  std::sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<GrammarBuilder::CodepointRange> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1) merged.back().last = std::max(merged.back().last, r.last);
    else merged.push_back(r);
  }
  if (!negated) return merged;
  std::vector<GrammarBuilder::CodepointRange> complement;
  uint32_t next = 0;
  for (const auto& r : merged) {
    if (r.first > next) complement.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= kMaxCodepoint) complement.push_back({next, kMaxCodepoint});
  return complement;
}

}  // namespace

int32_t GrammarBuilder::add_rule(std::string name) {
  rules_.push_back({.name = std::move(name)});
  return num_rules() - 1;
}

void GrammarBuilder::add_alternative(int32_t rule, Sequence sequence) {
  num_elements_ += sequence.size() + 1;
  rules_[rule].alternatives.push_back(std::move(sequence));
}

GrammarElement GrammarBuilder::bytes(const std::bitset<256>& set) {
  byte_sets_.push_back(set);
  return {.kind = Kind::kBytes, .value = static_cast<int32_t>(byte_sets_.size() - 1)};
}

GrammarBuilder::Sequence GrammarBuilder::literal(std::string_view text) {
  Sequence out;
  for (char c : text) {
    std::bitset<256> one;
    one.set(static_cast<unsigned char>(c));
    out.push_back(bytes(one));
  }
  return out;
}

// ASCII code points become one byte set; the others one alternative per UTF-8 pattern.
GrammarBuilder::Sequence GrammarBuilder::codepoint_class(std::vector<CodepointRange> ranges, bool negated,
                                                         const std::string& owner) {
  for (const auto& r : ranges)
    if (r.first > r.last || r.last > kMaxCodepoint)
      fail("{}: the character range {:#x}-{:#x} is out of order or past U+10FFFF", owner, r.first, r.last);
  std::bitset<256> ascii;
  std::vector<std::vector<ByteRange>> patterns;
  for (const auto& r : normalise(std::move(ranges), negated)) {
    for (uint32_t c = r.first; c <= std::min(r.last, uint32_t{0x7F}); ++c) ascii.set(c);
    if (r.last < 0x80) continue;
    for (auto& p : utf8_patterns(std::max(r.first, uint32_t{0x80}), r.last)) patterns.push_back(std::move(p));
  }
  if (patterns.empty() && ascii.none()) fail("{}: a character class matches no character", owner);
  if (patterns.empty()) return {bytes(ascii)};
  const int32_t rule = add_rule(owner + "/class");
  if (ascii.any()) add_alternative(rule, {bytes(ascii)});
  for (const auto& pattern : patterns) {
    Sequence seq;
    for (const ByteRange& b : pattern) {
      std::bitset<256> set;
      for (int v = b.first; v <= b.last; ++v) set.set(static_cast<size_t>(v));
      seq.push_back(bytes(set));
    }
    add_alternative(rule, std::move(seq));
  }
  return {{.kind = Kind::kRule, .value = rule}};
}

GrammarElement GrammarBuilder::as_element(Sequence item, const std::string& owner) {
  if (item.size() == 1) return item[0];
  const int32_t rule = add_rule(owner + "/group");
  add_alternative(rule, std::move(item));
  return {.kind = Kind::kRule, .value = rule};
}

// x{m,n}: m copies, then a nest of optionals (x (x (x)?)?)? so each count parses one way;
// x{m,}: m copies, then R ::= x R | "".
GrammarBuilder::Sequence GrammarBuilder::repeat(Sequence item, int32_t min, int32_t max, const std::string& owner) {
  if (min < 0 || min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && max < min))
    fail("{}: a repetition {{{},{}}} is out of range; bounds go from 0 to {} with min <= max", owner, min, max,
         kMaxRepeat);
  const GrammarElement x = as_element(std::move(item), owner);
  Sequence out(static_cast<size_t>(min), x);
  if (max < 0) {
    const int32_t rest = add_rule(owner + "/star");
    add_alternative(rest, {x, {.kind = Kind::kRule, .value = rest}});
    add_alternative(rest, {});
    out.push_back({.kind = Kind::kRule, .value = rest});
  } else if (max > min) {
    int32_t inner = -1;
    for (int32_t k = 0; k < max - min; ++k) {
      const int32_t optional = add_rule(owner + "/optional");
      Sequence seq = {x};
      if (inner >= 0) seq.push_back({.kind = Kind::kRule, .value = inner});
      add_alternative(optional, std::move(seq));
      add_alternative(optional, {});
      inner = optional;
    }
    out.push_back({.kind = Kind::kRule, .value = inner});
  }
  num_elements_ += out.size();
  check_size(owner);
  return out;
}

void GrammarBuilder::check_size(const std::string& what) const {
  if (num_elements_ > kMaxElements)
    fail("{}: too large once repetitions are expanded (over {} elements); use smaller {{m,n}} bounds", what,
         kMaxElements);
}

std::shared_ptr<const CompiledGrammar> GrammarBuilder::finish(int32_t root, const std::string& what) {
  check_size(what);
  auto g = std::make_shared<CompiledGrammar>();
  g->byte_sets = std::move(byte_sets_);
  g->root = root;
  for (Rule& rule : rules_) {
    std::vector<int32_t> starts;
    for (Sequence& alternative : rule.alternatives) {
      starts.push_back(static_cast<int32_t>(g->elements.size()));
      g->elements.insert(g->elements.end(), alternative.begin(), alternative.end());
      g->elements.push_back({.kind = Kind::kEnd});
    }
    g->alternatives.push_back(std::move(starts));
    g->rule_names.push_back(std::move(rule.name));
  }
  check_grammar_is_usable(*g, what);
  return g;
}

}  // namespace strata
