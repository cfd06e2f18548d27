#include "strata/kv_events/kv_event_encoding.h"

#include <string_view>

#include "strata/kv_events/msgpack_writer.h"

namespace strata {
namespace {

// A msgspec tagged struct as a map: the tag under "type" first, then the fields.
void begin_event(MsgpackWriter& w, uint32_t num_fields, std::string_view type) {
  w.map_header(num_fields + 1);
  w.str("type");
  w.str(type);
}

void write_hashes(MsgpackWriter& w, const std::vector<uint64_t>& hashes) {
  w.str("block_hashes");
  w.array_header(static_cast<uint32_t>(hashes.size()));
  for (uint64_t hash : hashes) w.unsigned_integer(hash);
}

void write_event(MsgpackWriter& w, const BlockStored& e) {
  begin_event(w, 7, "BlockStored");
  write_hashes(w, e.block_hashes);
  w.str("parent_block_hash");
  if (e.parent_block_hash) w.unsigned_integer(*e.parent_block_hash); else w.nil();
  w.str("token_ids");
  w.array_header(static_cast<uint32_t>(e.token_ids.size()));
  for (int32_t id : e.token_ids) w.integer(id);
  w.str("block_size");
  w.integer(e.block_size);
  w.str("lora_id");
  w.nil();
  w.str("medium");
  w.str(kKvEventMediumGpu);
  w.str("lora_name");
  w.nil();
}

void write_event(MsgpackWriter& w, const BlockRemoved& e) {
  begin_event(w, 2, "BlockRemoved");
  write_hashes(w, e.block_hashes);
  w.str("medium");
  w.str(kKvEventMediumGpu);
}

void write_event(MsgpackWriter& w, const AllBlocksCleared&) { begin_event(w, 0, "AllBlocksCleared"); }

}  // namespace

std::string encode_kv_event_batch(const KvEventBatch& batch, int32_t data_parallel_rank) {
  MsgpackWriter w;
  w.array_header(3);
  w.float64(batch.timestamp_s);
  w.array_header(static_cast<uint32_t>(batch.events.size()));
  for (const KvCacheEvent& event : batch.events) std::visit([&w](const auto& e) { write_event(w, e); }, event);
  w.integer(data_parallel_rank);
  return w.take();
}

}  // namespace strata
