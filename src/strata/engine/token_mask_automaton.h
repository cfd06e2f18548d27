// TokenMaskAutomaton: a recogniser's states interned by key() into a lazily built DFA over
// bytes, and the token mask of each state computed once by walking the vocabulary's trie
// with state ids (a table lookup a trie edge instead of copying and feeding a recogniser).
// One automaton serves every sequence of a constraint (a compiled grammar or schema); it
// is reset when it grows past kMaxStates, and its masks when the vocabulary changes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "strata/engine/json_token_mask.h"
#include "strata/engine/token_mask_cache.h"

namespace strata {

template <typename State>
class TokenMaskAutomaton {
 public:
  static constexpr size_t kMaxStates = 1 << 13;  // ~1 KB of transitions each
  static constexpr size_t kMaxMasks = 256;         // vocab / 8 bytes each

  std::vector<uint32_t> allowed(const State& state, const JsonTokenMask& mask) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (mask.id() != mask_id_) {
      masks_ = TokenMaskCache(kMaxMasks);
      mask_id_ = mask.id();
    }
    if (states_.size() > kMaxStates) reset();
    const int32_t id = intern(state);
    const std::string key(reinterpret_cast<const char*>(&id), sizeof(id));
    if (const std::vector<uint32_t>* hit = masks_.find(key)) return *hit;
    return masks_.put(key, mask.walk(id, [this](int32_t s, uint8_t byte) { return next(s, byte); }));
  }

 private:
  static constexpr int32_t kUnknown = -2, kDead = -1;

  int32_t intern(const State& state) {
    const auto [it, inserted] = index_.try_emplace(std::string(state.key()), static_cast<int32_t>(states_.size()));
    if (inserted) {
      states_.push_back(state);
      table_.emplace_back();
      table_.back().fill(kUnknown);
    }
    return it->second;
  }

  int32_t next(int32_t id, uint8_t byte) {
    int32_t known = table_[static_cast<size_t>(id)][byte];
    if (known != kUnknown) return known;
    State copy = states_[static_cast<size_t>(id)];
    known = copy.feed(byte) ? intern(copy) : kDead;
    table_[static_cast<size_t>(id)][byte] = known;
    return known;
  }

  void reset() {
    states_.clear();
    table_.clear();
    index_.clear();
    masks_ = TokenMaskCache(kMaxMasks);
  }

  std::mutex mutex_;
  std::vector<State> states_;
  std::vector<std::array<int32_t, 256>> table_;  // [state][byte]: the next state, kDead or kUnknown
  std::unordered_map<std::string, int32_t> index_;
  TokenMaskCache masks_{kMaxMasks};
  uint64_t mask_id_ = 0;
};

// The automaton of the constraint `owner` (a compiled grammar or schema; null for one
// shared by every json_object request): made on first use, dropped with its owner.
template <typename State>
std::shared_ptr<TokenMaskAutomaton<State>> automaton_for(const std::shared_ptr<const void>& owner) {
  using Entry = std::pair<std::weak_ptr<const void>, std::shared_ptr<TokenMaskAutomaton<State>>>;
  static std::mutex mutex;
  static std::vector<Entry> entries;
  static const auto shared = std::make_shared<TokenMaskAutomaton<State>>();
  if (owner == nullptr) return shared;
  std::lock_guard<std::mutex> lock(mutex);
  std::erase_if(entries, [](const Entry& e) { return e.first.expired(); });
  for (const auto& [weak, automaton] : entries)
    if (!weak.owner_before(owner) && !owner.owner_before(weak)) return automaton;
  entries.emplace_back(owner, std::make_shared<TokenMaskAutomaton<State>>());
  return entries.back().second;
}

}  // namespace strata
