// ControlInbox: the later ranks of a pipeline read rank 0's messages on a thread as they come. Rank 0
// sends 41 messages while no other rank's worker takes any (without the inbox its first round
// would wait for them until the timeout), and they arrive in order; a LoRA load's agreement round
// runs on the channel after them; a rank that fails while its inbox waits on rank 0 ends at once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "parallel/rank_threads_support.h"
#include "strata/parallel/control_inbox.h"
#include "test_support.h"

namespace strata::test {
namespace {

using std::chrono::seconds;

// A one-shot gate between the rank threads.
class Gate {
 public:
  void open() {
    const std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
};

std::unique_ptr<Communicator> control_of(int rank, int world, const std::string& name) {
  return make_shared_memory_communicator(
      {.rank = rank, .world_size = world, .group_name = fmt::format("strata-test-inbox-{}-{}", getpid(), name),
       .timeout = seconds(20)});
}

TEST(ControlInbox, RankZeroSendsWhileTheWorkersAreBusyAndTheyTakeItInOrder) {
  constexpr int kWorld = 3, kMessages = 40;
  Gate sent;
  run_rank_threads(kWorld, [&](int rank) {
    const std::unique_ptr<Communicator> control = control_of(rank, kWorld, per_test_name("order"));
    if (rank == 0) {
      for (int32_t i = 0; i < kMessages; ++i)
        send_to_ranks(*control, {.kind = RankMessage::Kind::kCopyKvBlock, .src_block = i, .dst_block = i + 1});
      send_to_ranks(*control, {.kind = RankMessage::Kind::kLoadLora, .lora_slot = 1, .lora_name = "a"});
      sent.open();  // the workers have taken nothing yet: the inbox threads took every round
      EXPECT_EQ(first_error_over_ranks(*control, ""), "rank 2 agrees");
      send_to_ranks(*control, {.kind = RankMessage::Kind::kStop});
      return;
    }
    ControlInbox inbox(*control);
    sent.wait();
    for (int32_t i = 0; i < kMessages; ++i) {
      const RankMessage message = inbox.pop();
      ASSERT_EQ(message.kind, RankMessage::Kind::kCopyKvBlock) << i;
      EXPECT_EQ(message.src_block, i);
    }
    ASSERT_EQ(inbox.pop().kind, RankMessage::Kind::kLoadLora);
    first_error_over_ranks(*control, rank == 2 ? "rank 2 agrees" : "");  // the inbox's thread waits meanwhile
    inbox.resume();
    EXPECT_EQ(inbox.pop().kind, RankMessage::Kind::kStop);
  });
}

// Rank 0 lives on and sends nothing: the failed rank's inbox stops waiting on it when it goes.
TEST(ControlInbox, ARankThatFailsDoesNotWaitForRankZero) {
  Gate done;
  run_rank_threads(2, [&](int rank) {
    const std::unique_ptr<Communicator> control = control_of(rank, 2, per_test_name("fail"));
    if (rank == 0) return done.wait();
    const auto start = std::chrono::steady_clock::now();
    {
      ControlInbox inbox(*control);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // its thread waits on rank 0 now
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(5));
    done.open();
  });
}

}  // namespace
}  // namespace strata::test
