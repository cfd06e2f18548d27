// CompiledGrammar: a context-free grammar over bytes, what regexes, choices and GBNF
// grammars compile to (GrammarBuilder), read by GrammarState. Rules are lists of
// alternatives; an alternative is a run of elements in `elements` ending in kEnd. Every
// grammar that compiles has no left recursion (so expanding a rule ends) and accepts some
// finite string (so an output can always be finished).
#pragma once

#include <bitset>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace strata {

struct GrammarElement {
  enum class Kind : uint8_t { kBytes, kRule, kEnd };
  Kind kind = Kind::kEnd;
  int32_t value = 0;  // kBytes: index into byte_sets; kRule: the rule
};

struct CompiledGrammar {
  std::vector<std::bitset<256>> byte_sets;
  std::vector<GrammarElement> elements;             // every alternative, each ending in kEnd
  std::vector<std::vector<int32_t>> alternatives;   // [rule]: where each alternative starts
  std::vector<std::string> rule_names;              // [rule], for error messages
  int32_t root = 0;
};

// Builds a CompiledGrammar rule by rule. A sequence is a vector of elements without kEnd;
// repetition and classes of code points become helper rules.
class GrammarBuilder {
 public:
  static constexpr int32_t kMaxRepeat = 1000;       // {m,n} bounds
  static constexpr size_t kMaxElements = 1 << 20;   // the grammar's size after expansion

  using Sequence = std::vector<GrammarElement>;
  struct CodepointRange {
    uint32_t first = 0, last = 0;  // inclusive
  };

  int32_t add_rule(std::string name);  // an empty rule; alternatives come later
  void add_alternative(int32_t rule, Sequence sequence);
  int32_t num_rules() const { return static_cast<int32_t>(rules_.size()); }
  const std::string& rule_name(int32_t rule) const { return rules_[rule].name; }

  // The UTF-8 bytes of `text`, one element each.
  Sequence literal(std::string_view text);
  // One code point from `ranges` (negated: any code point outside them), as UTF-8.
  Sequence codepoint_class(std::vector<CodepointRange> ranges, bool negated, const std::string& owner);
  // `item` repeated min..max times (max < 0: no limit), as helper rules named after `owner`.
  Sequence repeat(Sequence item, int32_t min, int32_t max, const std::string& owner);
  // `item` as one element: itself when it already is one, else a helper rule.
  GrammarElement as_element(Sequence item, const std::string& owner);

  // Throws strata::Error for left recursion, a root with no finite string, or a grammar
  // over the size limit; `what` names the input in messages ("regex", "grammar").
  std::shared_ptr<const CompiledGrammar> finish(int32_t root, const std::string& what);

 private:
  struct Rule {
    std::string name;
    std::vector<Sequence> alternatives;
  };
  GrammarElement bytes(const std::bitset<256>& set);
  void check_size(const std::string& what) const;

  std::vector<Rule> rules_;
  std::vector<std::bitset<256>> byte_sets_;
  size_t num_elements_ = 0;
};

// Fails (strata::Error) when a rule can reach itself before reading a byte, or when `root`
// derives no finite string; the message names the rule.
void check_grammar_is_usable(const CompiledGrammar& grammar, const std::string& what);

}  // namespace strata
