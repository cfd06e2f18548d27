// The NCCL communicator of one rank (world_size 1) on GPU 0, on random data: all_reduce_sum is
// the identity, all_gather_rows and all_to_all_rows a copy, broadcast_bytes keeps the root's
// bytes, barrier returns.
// Skipped without a GPU; more ranks need more GPUs (bench/communicator_bench --backend nccl).
// A CPU backend is refused in every build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include <fmt/format.h>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/parallel/communicator.h"
#include "test_support.h"

namespace strata::test {
namespace {

CommunicatorOptions one_rank_options() {
  return {.rank = 0, .world_size = 1, .group_name = per_test_name(fmt::format("{}", getpid())),
          .timeout = std::chrono::seconds(60)};
}

class CudaNcclCommunicator : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu_ = make_cuda_backend(0);
    if (!gpu_) GTEST_SKIP() << (cuda_backend_compiled() ? "no CUDA GPU visible" : "built without CUDA");
    comm_ = make_nccl_communicator(one_rank_options(), *gpu_);
  }

  // A host tensor of random values (bf16-rounded for bf16) and its device copy.
  std::pair<Tensor, Tensor> random_pair(DType dtype, Shape shape, uint32_t seed) {
    const Tensor host = dtype == DType::kF32 ? random_f32(shape, seed, -3.f, 3.f) : random_bf16(shape, seed, -3.f, 3.f);
    return {host, gpu_->from_host(host)};
  }

  std::unique_ptr<Backend> gpu_;
  std::unique_ptr<Communicator> comm_;
};

TEST_F(CudaNcclCommunicator, OneRankAllReduceSumIsTheIdentity) {
  EXPECT_EQ(comm_->world_size(), 1);
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    const auto [host, device] = random_pair(dtype, {257, 1031}, 7);
    comm_->all_reduce_sum(device);
    const Tensor back = gpu_->to_host(device);
    EXPECT_EQ(std::memcmp(back.data(), host.data(), host.nbytes()), 0) << dtype_name(dtype);
  }
}

TEST_F(CudaNcclCommunicator, OneRankAllGatherAndAllToAllCopyTheRows) {
  const auto [host, device] = random_pair(DType::kBF16, {33, 1000}, 9);
  for (const bool all_to_all : {false, true}) {
    const Tensor out = gpu_->empty(DType::kBF16, {33, 1000});
    gpu_->fill_bytes(out, 0xff);
    if (all_to_all) {
      comm_->all_to_all_rows(device, out);
    } else {
      comm_->all_gather_rows(device, out);
    }
    const Tensor back = gpu_->to_host(out);
    EXPECT_EQ(std::memcmp(back.data(), host.data(), host.nbytes()), 0) << "all_to_all " << all_to_all;
  }
}

TEST_F(CudaNcclCommunicator, OneRankBroadcastKeepsTheBytesAndBarrierReturns) {
  std::vector<uint8_t> empty;
  comm_->broadcast_bytes(empty, 0);
  EXPECT_TRUE(empty.empty());
  std::mt19937 rng(3);
  std::vector<uint8_t> bytes(3 << 20);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  const std::vector<uint8_t> sent = bytes;
  comm_->broadcast_bytes(bytes, 0);
  EXPECT_EQ(bytes, sent);
  comm_->barrier();
  EXPECT_THROW(comm_->broadcast_bytes(bytes, 1), Error);  // no rank 1 in a group of one
}

TEST(NcclCommunicator, ACpuBackendIsRefusedInEveryBuild) {
  const std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  try {
    make_nccl_communicator(one_rank_options(), *cpu);
    ADD_FAILURE() << "a CPU backend was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace strata::test
