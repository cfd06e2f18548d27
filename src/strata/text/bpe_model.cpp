// Merge loop: a linked list of symbols plus a binary heap of candidate merges keyed by
// (rank, position); stale heap entries are skipped when popped. O(n log n) per piece, so
// whole-text pieces (SentencePiece without a pre-tokenizer) stay fast.
#include "strata/text/bpe_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

#include "strata/core/error.h"
#include "strata/text/utf8.h"

namespace strata::text {

// Open-addressing map from an id pair to (rank, merged id).
struct BpeModel::PairMap {
  static constexpr uint64_t kEmpty = ~0ull;
  struct Slot {
    uint64_t key = kEmpty;
    int32_t rank = 0, merged = 0;
  };
  std::vector<Slot> slots;
  uint64_t mask = 0;

  explicit PairMap(size_t n) {
    size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots.resize(cap);
    mask = cap - 1;
  }
  static uint64_t key_of(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  size_t home(uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull >> 17) & mask; }
  void insert(uint64_t key, int32_t rank, int32_t merged) {
    for (size_t i = home(key);; i = (i + 1) & mask) {
      if (slots[i].key == key) return;  // the first (lowest-rank) merge of a pair wins
      if (slots[i].key == kEmpty) {
        slots[i] = {key, rank, merged};
        return;
      }
    }
  }
  const Slot* find(int32_t a, int32_t b) const {
    const uint64_t key = key_of(a, b);
    for (size_t i = home(key);; i = (i + 1) & mask) {
      if (slots[i].key == key) return &slots[i];
      if (slots[i].key == kEmpty) return nullptr;
    }
  }
};

namespace {

constexpr size_t kMaxCachedPieceBytes = 128;
constexpr size_t kMaxCacheEntries = 1 << 16;

struct Candidate {
  int32_t rank, pos, merged;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

}  // namespace

BpeModel::BpeModel(std::vector<std::string> tokens, const std::vector<std::pair<int32_t, int32_t>>& merges,
                   const BpeOptions& options)
    : tokens_(std::move(tokens)), options_(options), merges_(new PairMap(merges.size())) {
  index_.reserve(tokens_.size());
  for (size_t id = 0; id < tokens_.size(); ++id)
    if (!tokens_[id].empty()) index_.emplace(tokens_[id], static_cast<int32_t>(id));
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto [a, b] = merges[rank];
    const auto merged = token_to_id(tokens_.at(a) + tokens_.at(b));
    if (!merged) fail("BPE merge #{} joins tokens {} and {} into a string that is not in the vocabulary", rank, a, b);
    merges_->insert(PairMap::key_of(a, b), static_cast<int32_t>(rank), *merged);
  }
  for (int b = 0; b < 256; ++b) {
    const std::string spelling = options_.byte_level ? std::string(1, char(b)) : fmt::format("<0x{:02X}>", b);
    byte_ids_[b] = token_to_id(spelling).value_or(-1);
  }
}

BpeModel::~BpeModel() = default;

std::optional<int32_t> BpeModel::token_to_id(std::string_view spelling) const {
  const auto it = index_.find(spelling);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::initial_symbols(std::string_view piece, std::vector<int32_t>& ids) const {
  bool previous_unk = false;
  for (size_t pos = 0; pos < piece.size();) {
    size_t n = options_.byte_level ? 1 : utf8_sequence_length(piece, pos);
    if (n == 0) n = utf8_invalid_length(piece, pos);
    const std::string_view symbol = piece.substr(pos, n);
    pos += n;
    const auto id = options_.byte_level ? std::optional<int32_t>(byte_ids_[uint8_t(symbol[0])]) : token_to_id(symbol);
    if (id && *id >= 0) {
      ids.push_back(*id);
      previous_unk = false;
      continue;
    }
    const bool bytes_known = std::all_of(symbol.begin(), symbol.end(), [&](char c) { return byte_ids_[uint8_t(c)] >= 0; });
    if (options_.byte_fallback && bytes_known) {
      for (char c : symbol) ids.push_back(byte_ids_[uint8_t(c)]);
      previous_unk = false;
    } else if (options_.unk_id >= 0) {
      if (!(options_.fuse_unk && previous_unk)) ids.push_back(options_.unk_id);
      previous_unk = true;
    }
  }
}

void BpeModel::merge(std::vector<int32_t>& ids) const {
  const int32_t n = static_cast<int32_t>(ids.size());
  if (n < 2) return;
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  for (int32_t i = 0; i + 1 < n; ++i)
    if (const auto* m = merges_->find(ids[i], ids[i + 1])) heap.push({m->rank, i, m->merged});
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    const int32_t right = next[top.pos];
    if (ids[top.pos] < 0 || right < 0) continue;
    const auto* m = merges_->find(ids[top.pos], ids[right]);
    if (m == nullptr || m->merged != top.merged) continue;
    ids[top.pos] = top.merged;
    ids[right] = -1;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    if (prev[top.pos] >= 0)
      if (const auto* l = merges_->find(ids[prev[top.pos]], top.merged)) heap.push({l->rank, prev[top.pos], l->merged});
    if (next[top.pos] >= 0)
      if (const auto* r = merges_->find(top.merged, ids[next[top.pos]])) heap.push({r->rank, top.pos, r->merged});
  }
  ids.erase(std::remove(ids.begin(), ids.end(), -1), ids.end());
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& out) const {
  if (options_.ignore_merges)
    if (const auto id = token_to_id(piece)) {
      out.push_back(*id);
      return;
    }
  const bool cacheable = piece.size() <= kMaxCachedPieceBytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (const auto it = cache_.find(piece); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> ids;
  ids.reserve(piece.size());
  initial_symbols(piece, ids);
  merge(ids);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() >= kMaxCacheEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::move(ids));
  }
}

}  // namespace strata::text
