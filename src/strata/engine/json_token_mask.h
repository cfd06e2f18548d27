// JsonTokenMask: which tokens may come next under a JsonGrammar state. Every non-special
// token's text is put in a byte trie once; a mask walks the trie with copies of the state,
// so a shared prefix of many tokens is checked once.
#pragma once

#include <cstdint>
#include <vector>

#include "strata/engine/json_grammar.h"
#include "strata/text/tokenizer.h"

namespace strata {

class JsonTokenMask {
 public:
  explicit JsonTokenMask(const text::Tokenizer& tokenizer);

  // One bit per token id ((vocab + 31) / 32 words): set where the token's text can follow
  // `state` (any recogniser with feed(byte)). Special tokens are never set; the engine
  // ends the request when the value closes.
  template <typename Grammar>
  std::vector<uint32_t> allowed(const Grammar& state) const {
    std::vector<uint32_t> bits((texts_.size() + 31) / 32, 0u);
    visit(0, state, bits);
    return bits;
  }
  // The same bits, walking the trie with state ids: next(state, byte) is the state after
  // the byte, or negative when the byte cannot follow (TokenMaskAutomaton's DFA).
  template <typename Next>
  std::vector<uint32_t> walk(int32_t start, Next&& next) const {
    std::vector<uint32_t> bits((texts_.size() + 31) / 32, 0u);
    walk_from(0, start, next, bits);
    return bits;
  }
  // Distinct for every JsonTokenMask made in the process (masks cached elsewhere are
  // valid for one vocabulary).
  uint64_t id() const { return id_; }
  // The text the token adds (what the grammar is fed after the token is sampled).
  const std::string& token_text(int32_t id) const { return texts_[static_cast<size_t>(id)]; }

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // (byte, node)
    std::vector<int32_t> ids;                           // tokens that end here
  };
  template <typename Grammar>
  void visit(int32_t node, const Grammar& state, std::vector<uint32_t>& bits) const {
    for (int32_t id : nodes_[node].ids) bits[id / 32] |= 1u << (id % 32);
    for (const auto& [byte, child] : nodes_[node].children) {
      if constexpr (requires { state.accepts_byte(byte); })
        if (!state.accepts_byte(byte)) continue;  // skips the copy for most children
      Grammar next = state;
      if (next.feed(byte)) visit(child, next, bits);
    }
  }

  template <typename Next>
  void walk_from(int32_t node, int32_t state, Next& next, std::vector<uint32_t>& bits) const {
    for (int32_t id : nodes_[node].ids) bits[id / 32] |= 1u << (id % 32);
    for (const auto& [byte, child] : nodes_[node].children) {
      const int32_t after = next(state, byte);
      if (after >= 0) walk_from(child, after, next, bits);
    }
  }

  std::vector<std::string> texts_;  // [vocab]; empty for special tokens
  uint64_t id_;
  std::vector<Node> nodes_;         // nodes_[0] is the root
};

}  // namespace strata
