// copy_rows on the GPU against the CPU op on the same random rows: device to host (a swap out),
// host to device (a swap in), runs of consecutive rows and scattered ones, f32 and bf16-sized
// rows; the bytes must match exactly. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/copy_rows.h"

namespace strata::test {
namespace {

using CudaCopyRows = CudaOpTest;

// A mapping of n distinct source rows to n distinct destination rows, with consecutive runs.
std::vector<ops::RowCopy> random_copies(int32_t n, int32_t num_src, int32_t num_dst, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> src(num_src), dst(num_dst);
  for (int32_t i = 0; i < num_src; ++i) src[i] = i;
  for (int32_t i = 0; i < num_dst; ++i) dst[i] = i;
  std::shuffle(src.begin() + n / 2, src.end(), rng);  // the first half stays one consecutive run
  std::shuffle(dst.begin() + n / 2, dst.end(), rng);
  std::vector<ops::RowCopy> copies;
  for (int32_t i = 0; i < n; ++i) copies.push_back({.src_row = src[i], .dst_row = dst[i]});
  return copies;
}

TEST_F(CudaCopyRows, DeviceToHostAndBackMatchTheCpuBytewise) {
  for (const auto& [rows, row_elems] : std::vector<std::pair<int64_t, int64_t>>{{64, 16 * 8 * 128}, {33, 7}, {8, 262144}}) {
    const Tensor pool = random_rounded({rows, row_elems}, static_cast<uint64_t>(rows));
    const std::vector<ops::RowCopy> out = random_copies(static_cast<int32_t>(rows / 2), static_cast<int32_t>(rows),
                                                        static_cast<int32_t>(rows), 7);
    Tensor ref_host = random_rounded({rows, row_elems}, 99);
    Tensor got_host = gpu_->pinned_host(DType::kF32, {rows, row_elems});
    std::memcpy(got_host.data(), ref_host.data(), ref_host.nbytes());
    ops::copy_rows(ref_host, pool, out);
    const Tensor device_pool = gpu_copy(pool);
    ops::copy_rows(got_host, device_pool, out);
    gpu_->synchronize();
    EXPECT_EQ(std::memcmp(got_host.data(), ref_host.data(), ref_host.nbytes()), 0) << rows << "x" << row_elems;

    std::vector<ops::RowCopy> back;
    for (const ops::RowCopy& c : out) back.push_back({.src_row = c.dst_row, .dst_row = (c.src_row + 1) % static_cast<int32_t>(rows)});
    Tensor ref_pool = random_rounded({rows, row_elems}, 5);
    Tensor got_pool = gpu_copy(ref_pool);
    ops::copy_rows(ref_pool, ref_host, back);
    ops::copy_rows(got_pool, got_host, back);
    const Tensor got = gpu_->to_host(got_pool);
    EXPECT_EQ(std::memcmp(got.data(), ref_pool.data(), ref_pool.nbytes()), 0) << "back " << rows;
  }
}

TEST_F(CudaCopyRows, Bf16RowsMoveAsTheyAre) {
  const Tensor pool = random_rounded({16, 1000}, 3);
  const Tensor device_pool = gpu_bf16(pool);
  const std::vector<ops::RowCopy> copies = random_copies(9, 16, 12, 11);
  Tensor ref = Tensor::host(DType::kBF16, {12, 1000});
  std::memset(ref.data(), 0, ref.nbytes());
  Tensor got = gpu_->pinned_host(DType::kBF16, {12, 1000});
  std::memset(got.data(), 0, got.nbytes());
  ops::copy_rows(ref, to_bf16_host(pool), copies);
  ops::copy_rows(got, device_pool, copies);
  gpu_->synchronize();
  EXPECT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0);
}

}  // namespace
}  // namespace strata::test
