// TokenMaskCache: token masks already computed for a recogniser's states, keyed by the
// state's key() bytes, least recently used first out. A constrained output revisits the same
// states (inside a string, between array items, a regex's loop), and a cached mask costs a
// copy instead of a walk over the vocabulary's trie.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace strata {

class TokenMaskCache {
 public:
  explicit TokenMaskCache(size_t max_entries = 64) : max_entries_(max_entries) {}

  // The mask cached under `key`, or null (then put() it).
  const std::vector<uint32_t>* find(std::string_view key) {
    const auto it = index_.find(std::string(key));
    if (it == index_.end()) return nullptr;
    entries_.splice(entries_.begin(), entries_, it->second);
    return &it->second->second;
  }

  const std::vector<uint32_t>& put(std::string_view key, std::vector<uint32_t> mask) {
    if (entries_.size() >= max_entries_ && !entries_.empty()) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    entries_.emplace_front(std::string(key), std::move(mask));
    index_[entries_.front().first] = entries_.begin();
    return entries_.front().second;
  }

 private:
  using Entry = std::pair<std::string, std::vector<uint32_t>>;
  size_t max_entries_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace strata
