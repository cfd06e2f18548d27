// KvEventRecorder: an iteration's events leave as one batch, in order; nothing recorded,
// nothing sent; a batch the publisher refuses is reported.
#include "strata/engine/kv_event_recorder.h"

#include <gtest/gtest.h>

#include <chrono>

namespace strata {
namespace {

struct FakePublisher final : KvEventPublisher {
  std::vector<KvEventBatch> batches;
  bool full = false;
  bool publish(KvEventBatch batch) override {
    if (full) return false;
    batches.push_back(std::move(batch));
    return true;
  }
};

TEST(KvEventRecorder, OneBatchPerFlushInRecordedOrder) {
  FakePublisher publisher;
  KvEventRecorder recorder(publisher);
  EXPECT_TRUE(recorder.flush());
  EXPECT_TRUE(publisher.batches.empty());
  recorder.record(BlockStored{.block_hashes = {1}, .token_ids = {5, 6}, .block_size = 2});
  recorder.record(BlockRemoved{.block_hashes = {1}});
  const double before = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_TRUE(recorder.flush());
  ASSERT_EQ(publisher.batches.size(), 1u);
  ASSERT_EQ(publisher.batches[0].events.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<BlockStored>(publisher.batches[0].events[0]));
  EXPECT_TRUE(std::holds_alternative<BlockRemoved>(publisher.batches[0].events[1]));
  EXPECT_NEAR(publisher.batches[0].timestamp_s, before, 5.0);
  recorder.record(AllBlocksCleared{});
  publisher.full = true;
  EXPECT_FALSE(recorder.flush());
  publisher.full = false;
  EXPECT_TRUE(recorder.flush());  // the dropped batch is gone, not sent later
  EXPECT_EQ(publisher.batches.size(), 1u);
}

}  // namespace
}  // namespace strata
