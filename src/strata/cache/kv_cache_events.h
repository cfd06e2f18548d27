// What the prefix cache tells the outside about its blocks, as vLLM's KV-cache events name it:
// full blocks stored under their chain hashes, blocks evicted, everything cleared. Routers
// that place requests by cached prefix read these (docs/design.md, "KV-cache events").
#pragma once

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace strata {

// A run of consecutive blocks of one sequence became findable: block_hashes[i] covers
// token_ids[i * block_size, (i + 1) * block_size).
struct BlockStored {
  std::vector<uint64_t> block_hashes;
  std::optional<uint64_t> parent_block_hash;  // the block before the run; none: it starts the sequence
  std::vector<int32_t> token_ids;
  int32_t block_size = 0;
};

struct BlockRemoved {
  std::vector<uint64_t> block_hashes;
};

struct AllBlocksCleared {};

using KvCacheEvent = std::variant<BlockStored, BlockRemoved, AllBlocksCleared>;

// One engine step's events, in the order they happened.
struct KvEventBatch {
  double timestamp_s = 0;  // seconds since the Unix epoch
  std::vector<KvCacheEvent> events;
};

// Where the prefix cache records its events (on the engine thread, in order).
class KvEventSink {
 public:
  virtual ~KvEventSink() = default;
  virtual void record(KvCacheEvent event) = 0;
};

}  // namespace strata
