// The engine's KvEventSink: the prefix cache records into it on the engine thread, and each
// engine iteration's events leave as one batch (vLLM publishes one KVEventBatch per
// scheduler step), stamped with the wall-clock time.
#pragma once

#include <vector>

#include "strata/cache/kv_cache_events.h"
#include "strata/kv_events/kv_event_publisher.h"

namespace strata {

class KvEventRecorder final : public KvEventSink {
 public:
  explicit KvEventRecorder(KvEventPublisher& publisher) : publisher_(publisher) {}

  void record(KvCacheEvent event) override { events_.push_back(std::move(event)); }
  // Hands the events recorded since the last flush to the publisher as one batch; false when
  // the publisher dropped it. Nothing recorded: nothing sent, true.
  bool flush();

 private:
  KvEventPublisher& publisher_;
  std::vector<KvCacheEvent> events_;
};

}  // namespace strata
