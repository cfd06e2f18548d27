// --kv-events-config: vLLM's KVEventsConfig JSON (vllm/config/kv_events.py), the same keys
// and defaults, so a gateway's vLLM command line works unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace strata {

struct KvEventsConfig {
  bool enable_kv_cache_events = false;
  std::string publisher = "null";          // "zmq" or "null"; unset in the JSON: zmq when enabled
  std::string endpoint = "tcp://*:5557";   // PUB: bound when it holds *, :: or is ipc/inproc, else connected
  std::optional<std::string> replay_endpoint;  // ROUTER, bound: replays past batches on request
  int64_t buffer_steps = 10000;    // batches kept for replay
  int64_t hwm = 100000;            // the PUB socket's send high-water mark
  int64_t max_queue_size = 100000; // batches waiting for the publisher thread; more are dropped
  std::string topic;               // the first frame of every message

  bool publishes() const { return enable_kv_cache_events && publisher == "zmq"; }
};

// Throws strata::Error naming the key for unknown keys, wrong types, values out of range and
// publishers other than zmq and null.
KvEventsConfig parse_kv_events_config(std::string_view json);

}  // namespace strata
