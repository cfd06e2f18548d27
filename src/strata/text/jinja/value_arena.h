// ValueArena frees the reference cycles a render can build. Lists, dicts, callables and
// scopes are shared_ptrs and a template can make them point at each other (a macro's
// closure scope holds the macro; `x.append(x)`), which reference counting never frees.
// While an arena is current on a thread it records each one created; its destructor empties
// those still alive, which breaks every cycle. Template::render holds one per render.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace strata::jinja {

class ValueArena {
 public:
  ValueArena();
  ~ValueArena();
  ValueArena(const ValueArena&) = delete;
  ValueArena& operator=(const ValueArena&) = delete;

  // Records `object` with the current arena, if any. T::clear() drops every reference T holds.
  template <typename T>
  static void track(const std::shared_ptr<T>& object) {
    if (current_) current_->add(object, [](void* p) { static_cast<T*>(p)->clear(); });
  }

 private:
  using ClearFn = void (*)(void*);
  void add(std::weak_ptr<void> object, ClearFn clear);

  static inline thread_local ValueArena* current_ = nullptr;
  ValueArena* previous_;
  // A weak_ptr keeps its object's storage, so expired entries are dropped as the list grows.
  std::vector<std::pair<std::weak_ptr<void>, ClearFn>> objects_;
  size_t compact_at_ = 1024;
};

}  // namespace strata::jinja
