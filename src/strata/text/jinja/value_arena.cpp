#include "strata/text/jinja/value_arena.h"

#include <algorithm>

namespace strata::jinja {

ValueArena::ValueArena() : previous_(current_) { current_ = this; }

ValueArena::~ValueArena() {
  for (auto& [object, clear] : objects_) {
    if (const std::shared_ptr<void> alive = object.lock()) clear(alive.get());
  }
  current_ = previous_;
}

void ValueArena::add(std::weak_ptr<void> object, ClearFn clear) {
  if (objects_.size() >= compact_at_) {
    std::erase_if(objects_, [](const auto& entry) { return entry.first.expired(); });
    compact_at_ = std::max<size_t>(1024, 2 * objects_.size());
  }
  objects_.emplace_back(std::move(object), clear);
}

}  // namespace strata::jinja
