// GrammarState: a byte-at-a-time recogniser of a CompiledGrammar, for constrained decoding.
// The state is the set of parse stacks still alive (each a list of grammar positions, the
// top a byte set to match next), kept sorted and distinct in one flat vector so a copy is
// one allocation and the bytes double as the key of a mask cache. Stacks past kMaxDepth
// positions or sets past kMaxStacks stacks are dropped: such a path ends the output.
#pragma once

#include <bitset>
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "strata/engine/grammar.h"

namespace strata {

class GrammarState {
 public:
  static constexpr size_t kMaxDepth = 256;
  static constexpr size_t kMaxStacks = 512;

  GrammarState() = default;  // matches nothing; for holders that may have no grammar
  // `grammar` must outlive the state and its copies (the request holds it).
  explicit GrammarState(const CompiledGrammar* grammar);

  // False (and the state unchanged) when the bytes cannot continue what was fed.
  bool feed(unsigned char c);
  bool feed(std::string_view bytes);
  // Whether `c` can come next (cheap: read before copying the state).
  bool accepts_byte(unsigned char c) const { return next_bytes_.test(c); }
  // The bytes so far are a whole sentence of the grammar.
  bool can_end() const { return accepting_; }
  // ... and nothing may follow.
  bool done() const { return accepting_ && stacks_.empty(); }
  // Equal keys: equal states (the same bytes are taken from here on).
  std::string_view key() const {
    return {reinterpret_cast<const char*>(stacks_.data()), stacks_.size() * sizeof(int32_t)};
  }

 private:
  using Stack = std::vector<int32_t>;
  static constexpr size_t kMaxExpansions = 1 << 16;  // distinct stacks expanded by one feed
  // `seen`: the stacks already expanded in this feed (nested optional rules reach the same
  // stack along exponentially many paths; each is expanded once).
  void expand(Stack& stack, std::vector<Stack>& out, std::set<Stack>& seen) const;
  void settle(std::vector<Stack>& stacks);  // sort, dedupe, flatten; recompute next_bytes_, accepting_

  const CompiledGrammar* grammar_ = nullptr;
  std::vector<int32_t> stacks_;  // per stack: its size, then its positions bottom to top
  std::bitset<256> next_bytes_;
  bool accepting_ = false;
};

}  // namespace strata
