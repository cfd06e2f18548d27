#include "strata/engine/grammar_state.h"

#include <algorithm>

namespace strata {

using Kind = GrammarElement::Kind;

GrammarState::GrammarState(const CompiledGrammar* grammar) : grammar_(grammar) {
  std::vector<Stack> stacks;
  std::set<Stack> seen;
  for (int32_t start : grammar_->alternatives[grammar_->root]) {
    Stack stack;
    if (grammar_->elements[start].kind != Kind::kEnd) stack.push_back(start);
    expand(stack, stacks, seen);
  }
  settle(stacks);
}

// Replaces rule references on top until a byte set is on top (or the stack is empty: the
// grammar may end there). Positions at an alternative's end are never pushed, so a rule
// that ends in a reference (x*) recurses without growing the stack.
void GrammarState::expand(Stack& stack, std::vector<Stack>& out, std::set<Stack>& seen) const {
  if (stack.size() > kMaxDepth || seen.size() >= kMaxExpansions || !seen.insert(stack).second) return;
  if (stack.empty() || grammar_->elements[stack.back()].kind == Kind::kBytes) {
    out.push_back(stack);
    return;
  }
  const int32_t p = stack.back();
  stack.pop_back();
  if (grammar_->elements[p + 1].kind != Kind::kEnd) stack.push_back(p + 1);
  for (int32_t start : grammar_->alternatives[grammar_->elements[p].value]) {
    const bool empty = grammar_->elements[start].kind == Kind::kEnd;
    if (!empty) stack.push_back(start);
    expand(stack, out, seen);
    if (!empty) stack.pop_back();
  }
  if (grammar_->elements[p + 1].kind != Kind::kEnd) stack.pop_back();
  stack.push_back(p);
}

void GrammarState::settle(std::vector<Stack>& stacks) {
  std::sort(stacks.begin(), stacks.end());
  stacks.erase(std::unique(stacks.begin(), stacks.end()), stacks.end());
  if (stacks.size() > kMaxStacks) stacks.resize(kMaxStacks);
  stacks_.clear();
  next_bytes_.reset();
  accepting_ = false;
  for (const Stack& s : stacks) {
    if (s.empty()) {
      accepting_ = true;
      continue;
    }
    stacks_.push_back(static_cast<int32_t>(s.size()));
    stacks_.insert(stacks_.end(), s.begin(), s.end());
    next_bytes_ |= grammar_->byte_sets[grammar_->elements[s.back()].value];
  }
}

bool GrammarState::feed(unsigned char c) {
  if (!next_bytes_.test(c)) return false;
  std::vector<Stack> next;
  std::set<Stack> seen;
  Stack stack;
  for (size_t i = 0; i < stacks_.size(); i += static_cast<size_t>(stacks_[i]) + 1) {
    const int32_t size = stacks_[i];
    const int32_t top = stacks_[i + static_cast<size_t>(size)];
    if (!grammar_->byte_sets[grammar_->elements[top].value].test(c)) continue;
    stack.assign(stacks_.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                 stacks_.begin() + static_cast<std::ptrdiff_t>(i) + size);
    if (grammar_->elements[top + 1].kind != Kind::kEnd) stack.push_back(top + 1);
    expand(stack, next, seen);
  }
  if (next.empty()) return false;
  settle(next);
  return true;
}

bool GrammarState::feed(std::string_view bytes) {
  const GrammarState before = *this;
  for (char c : bytes)
    if (!feed(static_cast<unsigned char>(c))) {
      *this = before;
      return false;
    }
  return true;
}

}  // namespace strata
