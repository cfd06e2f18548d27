// The shared-memory communicator between 2 and 4 forked ranks: every collective on random f32
// and bf16 data below, at and above a slot, checked bitwise against sums the parent computes in
// rank order; ranks that exit, never join or get stuck make the others fail within the timeout;
// the segment's name is gone after every group, failed ones too.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "parallel/collective_checks_support.h"
#include "parallel/rank_outputs_support.h"
#include "strata/core/error.h"
#include "test_support.h"

namespace strata::test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int64_t kSlotBytes = 64 << 10;

struct DataCase {
  DType dtype;
  Shape shape;
};

// Below a slot, past the one-round reduce size (32 KiB), exactly a slot, and several slots.
const std::vector<DataCase> kReduceCases = {
    {DType::kF32, {1}},         {DType::kF32, {7}},          {DType::kF32, {1000}},
    {DType::kF32, {8200}},      {DType::kF32, {16384}},      {DType::kF32, {37, 1111}},
    {DType::kBF16, {1}},        {DType::kBF16, {1001}},      {DType::kBF16, {32768}},
    {DType::kBF16, {129, 777}},
};
const std::vector<DataCase> kGatherCases = {
    {DType::kF32, {1, 3}}, {DType::kBF16, {5, 1000}}, {DType::kF32, {16, 1024}}, {DType::kF32, {33, 1000}},
};

// Rows for each destination of all_to_all_rows: below a slot's share, a whole slot (16 KiB a
// destination at 4 ranks), and several slots.
const std::vector<DataCase> kAllToAllCases = {
    {DType::kF32, {1, 3}}, {DType::kBF16, {5, 1000}}, {DType::kF32, {4, 1024}}, {DType::kF32, {33, 1000}},
};

// Rank r's input: magnitudes grow with the rank, so adding in another order changes bits.
Tensor rank_input(const DataCase& c, size_t case_index, int rank) {
  const auto seed = static_cast<uint32_t>(1000 * case_index + rank);
  const float scale = 10.f * static_cast<float>(rank + 1);
  return c.dtype == DType::kF32 ? random_f32(c.shape, seed, -scale, scale) : random_bf16(c.shape, seed, -scale, scale);
}

float value_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kF32 ? t.data_as<float>()[i] : bf16_to_f32(t.data_as<uint16_t>()[i]);
}

// The ranks' inputs added in rank order in f32, bf16 rounded once.
Tensor rank_order_sum(const DataCase& c, size_t case_index, int world_size) {
  std::vector<float> acc(c.shape.numel());
  for (int r = 0; r < world_size; ++r) {
    const Tensor x = rank_input(c, case_index, r);
    for (int64_t i = 0; i < x.numel(); ++i) acc[i] = r == 0 ? value_at(x, i) : acc[i] + value_at(x, i);
  }
  Tensor out = Tensor::host(c.dtype, c.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    if (c.dtype == DType::kF32) {
      out.data_as<float>()[i] = acc[i];
    } else {
      out.data_as<uint16_t>()[i] = f32_to_bf16(acc[i]);
    }
  }
  return out;
}

std::unique_ptr<Communicator> join(CommunicatorOptions options, int rank) {
  options.rank = rank;
  return make_shared_memory_communicator(options);
}

int64_t total_bytes(const std::vector<DataCase>& cases, int64_t times) {
  int64_t n = 0;
  for (const DataCase& c : cases) n += dtype_bytes(c.dtype, c.shape.numel()) * times;
  return n;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class SharedMemoryCommunicator : public ::testing::TestWithParam<int> {
 protected:
  int world_size() const { return GetParam(); }

  // Runs body(comm, rank) on every rank of a fresh group of `options`.
  std::vector<int> run_group(RankOutputs& outputs, const CommunicatorOptions& options,
                             const std::function<void(Communicator&, int)>& body) {
    return run_ranks(world_size(), outputs, [&](int rank) { body(*join(options, rank), rank); });
  }

  // Every rank ran to the end, and the group's segment has no name left.
  void expect_success(const std::vector<int>& codes, const RankOutputs& outputs, const CommunicatorOptions& options) {
    for (int r = 0; r < world_size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r << ": " << outputs.error(r);
    EXPECT_FALSE(segment_exists(options.group_name));
  }
};

TEST_P(SharedMemoryCommunicator, AllReduceSumIsTheRankOrderSumBitwiseOnEveryRank) {
  RankOutputs outputs(world_size(), total_bytes(kReduceCases, 1));
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    uint8_t* out = outputs.data(rank);
    for (size_t i = 0; i < kReduceCases.size(); ++i) {
      const Tensor x = rank_input(kReduceCases[i], i, rank);
      comm.all_reduce_sum(x);
      out = static_cast<uint8_t*>(std::memcpy(out, x.data(), x.nbytes())) + x.nbytes();
    }
  });
  expect_success(codes, outputs, options);
  int64_t offset = 0;
  for (size_t i = 0; i < kReduceCases.size(); ++i) {
    const Tensor want = rank_order_sum(kReduceCases[i], i, world_size());
    for (int r = 0; r < world_size(); ++r)
      EXPECT_EQ(std::memcmp(outputs.data(r) + offset, want.data(), want.nbytes()), 0)
          << dtype_name(want.dtype()) << " " << want.shape().str() << " on rank " << r;
    offset += want.nbytes();
  }
}

TEST_P(SharedMemoryCommunicator, AllGatherRowsPutsRankRowsInRankOrder) {
  RankOutputs outputs(world_size(), total_bytes(kGatherCases, world_size()));
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    uint8_t* out = outputs.data(rank);
    for (size_t i = 0; i < kGatherCases.size(); ++i) {
      const Tensor in = rank_input(kGatherCases[i], i, rank);
      Shape shape = in.shape();
      shape[0] *= world_size();
      const Tensor gathered = Tensor::view(out, in.dtype(), shape);
      comm.all_gather_rows(in, gathered);
      out += gathered.nbytes();
    }
  });
  expect_success(codes, outputs, options);
  int64_t offset = 0;
  for (size_t i = 0; i < kGatherCases.size(); ++i) {
    for (int part = 0; part < world_size(); ++part) {
      const Tensor want = rank_input(kGatherCases[i], i, part);
      for (int r = 0; r < world_size(); ++r)
        EXPECT_EQ(std::memcmp(outputs.data(r) + offset, want.data(), want.nbytes()), 0)
            << want.shape().str() << ": rank " << part << "'s rows on rank " << r;
      offset += want.nbytes();
    }
  }
}

// Case c with world_size blocks of its rows, one for each destination.
DataCase all_to_all_input(const DataCase& c, int world_size) {
  DataCase whole = c;
  whole.shape[0] *= world_size;
  return whole;
}

TEST_P(SharedMemoryCommunicator, AllToAllRowsSendsEachRankItsBlock) {
  RankOutputs outputs(world_size(), total_bytes(kAllToAllCases, world_size()));
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    uint8_t* out = outputs.data(rank);
    for (size_t i = 0; i < kAllToAllCases.size(); ++i) {
      const Tensor in = rank_input(all_to_all_input(kAllToAllCases[i], world_size()), i, rank);
      const Tensor received = Tensor::view(out, in.dtype(), in.shape());
      comm.all_to_all_rows(in, received);
      out += received.nbytes();
    }
  });
  expect_success(codes, outputs, options);
  int64_t offset = 0;
  for (size_t i = 0; i < kAllToAllCases.size(); ++i) {
    const int64_t block = dtype_bytes(kAllToAllCases[i].dtype, kAllToAllCases[i].shape.numel());
    for (int r = 0; r < world_size(); ++r)
      for (int from = 0; from < world_size(); ++from) {
        const Tensor sent = rank_input(all_to_all_input(kAllToAllCases[i], world_size()), i, from);
        EXPECT_EQ(std::memcmp(outputs.data(r) + offset + from * block, static_cast<const uint8_t*>(sent.data()) + r * block,
                              block), 0)
            << kAllToAllCases[i].shape.str() << ": rank " << from << "'s block for rank " << r;
      }
    offset += block * world_size();
  }
}

TEST_P(SharedMemoryCommunicator, BroadcastBytesOfAnySizeReachesEveryRank) {
  const std::vector<int64_t> sizes = {0, 1, 1000, kSlotBytes, 3 * kSlotBytes + 12345};
  RankOutputs outputs(world_size(), broadcast_output_bytes(sizes));
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    broadcast_each_size(comm, rank, sizes, outputs);
  });
  expect_success(codes, outputs, options);
  expect_every_broadcast_arrived(outputs, world_size(), sizes);
}

TEST_P(SharedMemoryCommunicator, BarrierReturnsOnlyOnceEveryRankHasReachedIt) {
  RankOutputs outputs(world_size(), 0);
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    staggered_barriers(comm, rank, outputs);
  });
  expect_success(codes, outputs, options);
}

// Collectives of every kind and of odd and even numbers of rounds, in one group.
TEST_P(SharedMemoryCommunicator, CollectivesOfEveryKindFollowOneAnother) {
  const DataCase reduced{DType::kF32, {8200}};  // two rounds
  const DataCase gathered{DType::kBF16, {3, 5}};
  constexpr int kRepeats = 3;
  const int64_t per_repeat = reduced.shape.numel() * 4 + gathered.shape.numel() * 2 * world_size() + 1000;
  RankOutputs outputs(world_size(), kRepeats * per_repeat);
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    for (int k = 0; k < kRepeats; ++k) {
      uint8_t* out = outputs.data(rank) + k * per_repeat;
      const Tensor x = rank_input(reduced, k, rank);
      comm.all_reduce_sum(x);
      comm.barrier();
      const Tensor in = rank_input(gathered, k, rank);
      const Tensor all = Tensor::view(out + x.nbytes(), DType::kBF16, {3 * world_size(), 5});
      comm.all_gather_rows(in, all);
      std::vector<uint8_t> bytes = rank == k % world_size() ? random_bytes(1000, k) : std::vector<uint8_t>{};
      comm.broadcast_bytes(bytes, k % world_size());
      std::memcpy(out, x.data(), x.nbytes());
      std::memcpy(out + x.nbytes() + all.nbytes(), bytes.data(), bytes.size());
    }
  });
  expect_success(codes, outputs, options);
  for (int k = 0; k < kRepeats; ++k) {
    const Tensor sum = rank_order_sum(reduced, k, world_size());
    for (int r = 0; r < world_size(); ++r) {
      const uint8_t* got = outputs.data(r) + k * per_repeat;
      EXPECT_EQ(std::memcmp(got, sum.data(), sum.nbytes()), 0) << "repeat " << k << " rank " << r;
      got += sum.nbytes();
      for (int part = 0; part < world_size(); ++part, got += 30)
        EXPECT_EQ(std::memcmp(got, rank_input(gathered, k, part).data(), 30), 0) << "repeat " << k << " rank " << r;
      EXPECT_EQ(std::memcmp(got, random_bytes(1000, k).data(), 1000), 0) << "repeat " << k << " rank " << r;
    }
  }
}

TEST_P(SharedMemoryCommunicator, ARankThatExitsMakesTheOthersFailAtOnce) {
  const int gone = world_size() - 1;
  RankOutputs outputs(world_size(), 0);
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(2));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    if (rank == gone) _exit(0);  // without leaving the group, as a crash would
    const auto start = std::chrono::steady_clock::now();
    try {
      comm.all_reduce_sum(random_f32({1000}, rank));
    } catch (const Error&) {
      outputs.seconds(rank) = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      throw;
    }
  });
  EXPECT_EQ(codes[gone], 0);
  for (int r = 0; r < gone; ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains(outputs.error(r), fmt::format("rank {}", gone))) << outputs.error(r);
    EXPECT_TRUE(contains(outputs.error(r), "all_reduce_sum")) << outputs.error(r);
    EXPECT_LT(outputs.seconds(r), 1.9) << "rank " << r << " waited for the timeout: " << outputs.error(r);
  }
  EXPECT_FALSE(segment_exists(options.group_name));
}

TEST_P(SharedMemoryCommunicator, ARankThatNeverJoinsFailsTheRendezvousWithinTheTimeout) {
  for (const int absent : {world_size() - 1, 0}) {
    RankOutputs outputs(world_size(), 0);
    const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(2));
    const auto start = std::chrono::steady_clock::now();
    const auto codes = run_ranks(world_size(), outputs, [&](int rank) {
      if (rank != absent) join(options, rank);
    });
    EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(6));
    for (int r = 0; r < world_size(); ++r) {
      if (r == absent) continue;
      EXPECT_EQ(codes[r], 1) << "rank " << r;
      EXPECT_TRUE(contains(outputs.error(r), fmt::format("rank {}", absent))) << outputs.error(r);
    }
    EXPECT_FALSE(segment_exists(options.group_name)) << "absent rank " << absent;
  }
}

TEST_P(SharedMemoryCommunicator, AStuckRankMakesTheOthersTimeOut) {
  const int stuck = world_size() - 1;
  RankOutputs outputs(world_size(), 0);
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(1));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    if (rank == stuck) std::this_thread::sleep_for(milliseconds(1500));
    comm.all_reduce_sum(random_bf16({100}, rank));
  });
  // The ranks that arrived posted their data before giving up: the stuck one may still finish.
  for (int r = 0; r < stuck; ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains(outputs.error(r), fmt::format("rank {} did not reach all_reduce_sum within 1 s", stuck)))
        << outputs.error(r);
  }
  EXPECT_FALSE(segment_exists(options.group_name));
}

TEST_P(SharedMemoryCommunicator, RanksInDifferentCollectivesFailInsteadOfMixingData) {
  RankOutputs outputs(world_size(), 0);
  const CommunicatorOptions options = group_options(world_size(), kSlotBytes, seconds(30));
  const auto codes = run_group(outputs, options, [&](Communicator& comm, int rank) {
    std::vector<uint8_t> bytes(10);
    if (rank == 0) {
      comm.barrier();
    } else {
      comm.broadcast_bytes(bytes, 0);
    }
  });
  for (int r = 0; r < world_size(); ++r) {
    EXPECT_EQ(codes[r], 1) << "rank " << r;
    EXPECT_TRUE(contains(outputs.error(r), "every rank must call the same collectives")) << outputs.error(r);
  }
  EXPECT_FALSE(segment_exists(options.group_name));
}

INSTANTIATE_TEST_SUITE_P(Ranks, SharedMemoryCommunicator, ::testing::Values(2, 4));

// A rank 0 killed during the rendezvous leaves its segment behind; the next group removes it.
TEST(SharedMemoryGroupSegment, AStaleSegmentIsReplacedByTheNextGroup) {
  const CommunicatorOptions options = group_options(2, kSlotBytes, seconds(30));
  const pid_t crashed = fork();
  if (crashed == 0) {
    join(options, 0);  // waits for rank 1, which never comes
    _exit(0);
  }
  for (int i = 0; i < 5000 && !segment_exists(options.group_name); ++i) std::this_thread::sleep_for(milliseconds(1));
  ASSERT_TRUE(segment_exists(options.group_name));
  kill(crashed, SIGKILL);
  waitpid(crashed, nullptr, 0);
  ASSERT_TRUE(segment_exists(options.group_name));

  RankOutputs outputs(2, 4);
  const auto codes = run_ranks(2, outputs, [&](int rank) {
    auto comm = join(options, rank);
    const Tensor x = Tensor::view(outputs.data(rank), DType::kF32, {1});
    x.data_as<float>()[0] = static_cast<float>(rank + 1);
    comm->all_reduce_sum(x);
  });
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(codes[r], 0) << outputs.error(r);
    float got = 0;
    std::memcpy(&got, outputs.data(r), 4);
    EXPECT_EQ(got, 3.f);
  }
  EXPECT_FALSE(segment_exists(options.group_name));
}

TEST(SharedMemoryGroupSegment, OptionsAreCheckedBeforeAnythingIsCreated) {
  const CommunicatorOptions good = group_options(2, kSlotBytes, seconds(1));
  const auto expect_refused = [&](CommunicatorOptions options, const std::string& part) {
    try {
      make_shared_memory_communicator(options);
      ADD_FAILURE() << "accepted options; expected an error with '" << part << "'";
    } catch (const Error& e) {
      EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  expect_refused({.rank = 2, .world_size = 2, .group_name = good.group_name}, "rank 2 is out of range");
  expect_refused({.rank = 0, .world_size = 0, .group_name = good.group_name}, "world_size 0");
  expect_refused({.rank = 0, .world_size = 2, .group_name = "a/b"}, "group name 'a/b'");
  expect_refused({.rank = 0, .world_size = 2, .group_name = ""}, "group name ''");
  expect_refused({.rank = 0, .world_size = 2, .group_name = good.group_name, .slot_bytes = 5000}, "slot_bytes 5000");
  EXPECT_FALSE(segment_exists(good.group_name));
}

TEST(SharedMemoryGroupSegment, OneRankIsItsOwnGroup) {
  const CommunicatorOptions options = group_options(1, kSlotBytes, seconds(5));
  auto comm = make_shared_memory_communicator(options);
  EXPECT_FALSE(segment_exists(options.group_name));  // every rank has joined: the name is gone
  const Tensor x = random_bf16({3, 40000}, 5);
  const Tensor before = Tensor::host(DType::kBF16, x.shape());
  std::memcpy(before.data(), x.data(), x.nbytes());
  comm->all_reduce_sum(x);
  EXPECT_EQ(std::memcmp(x.data(), before.data(), x.nbytes()), 0);
  const Tensor out = Tensor::host(DType::kBF16, x.shape());
  comm->all_gather_rows(x, out);
  EXPECT_EQ(std::memcmp(out.data(), x.data(), x.nbytes()), 0);
  std::vector<uint8_t> bytes = random_bytes(300000, 1);
  comm->broadcast_bytes(bytes, 0);
  EXPECT_EQ(bytes, random_bytes(300000, 1));
  comm->barrier();
}

}  // namespace
}  // namespace strata::test
