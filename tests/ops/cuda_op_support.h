// Helpers for the CUDA op tests: the same random inputs for the CPU reference (f32 holding
// bf16-rounded values) and the GPU (bf16), poisoned outputs, and the comparison that every
// CUDA op test uses (all finite, relative L2 within bf16 tolerance).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "strata/backend/backend.h"

namespace strata::test {

constexpr double kBf16Tolerance = 1e-2;

// f32 host tensor, uniform in [lo, hi), already rounded to bf16 values. Fast for large shapes.
Tensor random_rounded(Shape shape, uint64_t seed, float lo = -1.f, float hi = 1.f);
// Host bf16 copy of an f32 host tensor (exact for bf16-rounded values).
Tensor to_bf16_host(const Tensor& f32);
// Any host or device tensor (f32 or bf16) as an f32 host tensor.
Tensor as_f32_host(Backend& gpu, const Tensor& t);
// Host i32 tensor.
Tensor int_tensor(const std::vector<int32_t>& values);
// A host copy of a host tensor (a reference op's in-out state, kept apart from the GPU's).
Tensor host_copy(const Tensor& t);

struct CompareResult {
  bool finite = true;
  double rel_l2 = 0;
};
CompareResult compare(const Tensor& got_f32, const Tensor& ref_f32);

// gtest check: all of `got` finite and relative L2 against `ref` below tol.
void expect_close(Backend& gpu, const Tensor& got, const Tensor& ref, double tol, const std::string& what);

class CudaOpTest : public ::testing::Test {
 protected:
  void SetUp() override;
  // A bf16 device copy of an f32 host tensor of bf16-rounded values.
  Tensor gpu_bf16(const Tensor& f32) { return gpu_->from_host(to_bf16_host(f32)); }
  Tensor gpu_copy(const Tensor& host) { return gpu_->from_host(host); }
  // Device tensor filled with 0xFF bytes (NaN in bf16 and f32) for the kernel to overwrite.
  Tensor poisoned(DType dtype, Shape shape);
  // The down projection [n, k] reading act(gate) * up from m rows of [2k] and adding into a
  // residual: `weight` (host, any dtype the CPU linear reads) against `gpu_weight`.
  void expect_gated_accumulate_matches(const Tensor& weight, const Tensor& gpu_weight, int64_t m, uint64_t seed);

  std::unique_ptr<Backend> gpu_;
};

}  // namespace strata::test
