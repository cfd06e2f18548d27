// Where the engine hands each step's KV-cache events. publish() never blocks the engine
// step: a batch that finds no room is dropped, and the caller counts it.
#pragma once

#include "strata/cache/kv_cache_events.h"

namespace strata {

class KvEventPublisher {
 public:
  virtual ~KvEventPublisher() = default;
  // False: the batch was dropped (the queue to the network is full).
  virtual bool publish(KvEventBatch batch) = 0;
};

}  // namespace strata
