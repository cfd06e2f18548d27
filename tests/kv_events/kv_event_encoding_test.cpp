// A KVEventBatch's exact bytes: what msgpack-python packs for the batch vLLM's msgspec
// structs give ([ts, events, rank]; each event a map tagged "type", fields in order).
#include "strata/kv_events/kv_event_encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "kv_events/hex_bytes.h"

namespace strata {
namespace {

using test::hex;

TEST(KvEventEncoding, StoredRemovedClearedAsVllmWritesThem) {
  const KvEventBatch batch{
      .timestamp_s = 1.5,
      .events = {BlockStored{.block_hashes = {UINT64_MAX, 5}, .token_ids = {1, 300}, .block_size = 2},
                 BlockRemoved{.block_hashes = {7}}, AllBlocksCleared{}}};
  EXPECT_EQ(hex(encode_kv_event_batch(batch, 0)),
            "93cb3ff8000000000000"  // [1.5,
            "93"                    //  [
            "88a474797065ab426c6f636b53746f726564"              // {"type": "BlockStored",
            "ac626c6f636b5f68617368657392cfffffffffffffffff05"  //  "block_hashes": [2^64 - 1, 5],
            "b1706172656e745f626c6f636b5f68617368c0"            //  "parent_block_hash": None,
            "a9746f6b656e5f6964739201cd012c"                    //  "token_ids": [1, 300],
            "aa626c6f636b5f73697a6502"                          //  "block_size": 2,
            "a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0"  // lora_id, medium "GPU", lora_name
            "83a474797065ac426c6f636b52656d6f766564ac626c6f636b5f6861736865739107a66d656469756da3475055"
            "81a474797065b0416c6c426c6f636b73436c6561726564"  // {"type": "AllBlocksCleared"}],
            "00");                                            //  0]
}

TEST(KvEventEncoding, AParentHashIsAnInteger) {
  const KvEventBatch batch{
      .timestamp_s = 2.0,
      .events = {BlockStored{.block_hashes = {9}, .parent_block_hash = 5, .token_ids = {3, 4}, .block_size = 2}}};
  const std::string bytes = hex(encode_kv_event_batch(batch, 0));
  EXPECT_EQ(bytes,
            "93cb40000000000000009188a474797065ab426c6f636b53746f726564ac626c6f636b5f6861736865739109b1706172656e74"
            "5f626c6f636b5f6861736805a9746f6b656e5f696473920304aa626c6f636b5f73697a6502a76c6f72615f6964c0a66d656469"
            "756da3475055a96c6f72615f6e616d65c000");
}

}  // namespace
}  // namespace strata
