#include "strata/engine/kv_event_recorder.h"

#include <chrono>

namespace strata {

bool KvEventRecorder::flush() {
  if (events_.empty()) return true;
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  KvEventBatch batch{.timestamp_s = std::chrono::duration<double>(now).count(), .events = std::move(events_)};
  events_.clear();
  return publisher_.publish(std::move(batch));
}

}  // namespace strata
