// The bytes of vLLM's KVEventBatch as its ZmqEventPublisher sends them (msgspec msgpack,
// vllm/distributed/kv_events.py): the batch an array [ts, events, data_parallel_rank]; each
// event a map tagged with its class name under "type", then its fields in declaration
// order, those with defaults (extra_keys, group_idx, ...) left out as msgspec omits them.
#pragma once

#include <cstdint>
#include <string>

#include "strata/cache/kv_cache_events.h"

namespace strata {

// The medium vLLM names the engine's own KV cache, whatever the device.
inline constexpr const char* kKvEventMediumGpu = "GPU";

std::string encode_kv_event_batch(const KvEventBatch& batch, int32_t data_parallel_rank);

}  // namespace strata
