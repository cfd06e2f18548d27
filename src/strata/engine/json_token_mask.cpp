#include "strata/engine/json_token_mask.h"

#include <algorithm>
#include <atomic>

namespace strata {

namespace {
std::atomic<uint64_t> g_next_mask_id{1};
}  // namespace

JsonTokenMask::JsonTokenMask(const text::Tokenizer& tokenizer) : id_(g_next_mask_id++), nodes_(1) {
  const int32_t vocab = tokenizer.vocab_size();
  texts_.resize(static_cast<size_t>(vocab));
  for (int32_t id = 0; id < vocab; ++id) {
    if (tokenizer.is_special(id)) continue;
    const int32_t one[] = {id};
    texts_[id] = tokenizer.decode(one, /*skip_special_tokens=*/false);
    if (texts_[id].empty()) continue;
    int32_t node = 0;
    for (char c : texts_[id]) {
      const auto byte = static_cast<uint8_t>(c);
      auto& children = nodes_[node].children;
      auto it = std::find_if(children.begin(), children.end(), [&](const auto& e) { return e.first == byte; });
      if (it == children.end()) {
        const int32_t child = static_cast<int32_t>(nodes_.size());
        nodes_[node].children.emplace_back(byte, child);  // before nodes_ grows: `children` may move
        nodes_.emplace_back();
        node = child;
      } else {
        node = it->second;
      }
    }
    nodes_[node].ids.push_back(id);
  }
}

}  // namespace strata
