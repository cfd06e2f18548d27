// Server-sent events from a streamed HTTP body: bytes arrive in arbitrary pieces, events
// end at a blank line, and each event's `data:` lines are handed on joined by newlines.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace strata::bench {

class SseReader {
 public:
  using OnData = std::function<void(std::string_view data)>;

  // Calls on_data once for each event completed by these bytes (none for an event without data).
  void feed(std::string_view bytes, const OnData& on_data);

 private:
  void take_event(std::string_view event, const OnData& on_data) const;

  std::string pending_;  // bytes of the event not yet ended
};

}  // namespace strata::bench
