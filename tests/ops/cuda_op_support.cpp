#include "ops/cuda_op_support.h"

#include <cmath>
#include <cstring>

#include "strata/core/error.h"
#include "strata/core/parallel.h"
#include "strata/ops/linear.h"

namespace strata::test {

Tensor random_rounded(Shape shape, uint64_t seed, float lo, float hi) {
  Tensor t = Tensor::host(DType::kF32, shape);
  float* p = t.data_as<float>();
  parallel_for(t.numel(), 1 << 16, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
      x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
      x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
      x ^= x >> 31;
      const float u = static_cast<float>(x >> 40) / 16777216.0f;
      p[i] = bf16_to_f32(f32_to_bf16(lo + (hi - lo) * u));
    }
  });
  return t;
}

Tensor to_bf16_host(const Tensor& f32) {
  Tensor out = Tensor::host(DType::kBF16, f32.shape());
  for (int64_t i = 0; i < f32.numel(); ++i) out.data_as<uint16_t>()[i] = f32_to_bf16(f32.data_as<float>()[i]);
  return out;
}

Tensor as_f32_host(Backend& gpu, const Tensor& t) {
  Tensor host = t.device().is_cpu() ? t : gpu.to_host(t);
  if (host.dtype() == DType::kF32) return host;
  Tensor out = Tensor::host(DType::kF32, host.shape());
  STRATA_CHECK(host.dtype() == DType::kBF16);
  for (int64_t i = 0; i < host.numel(); ++i)
    out.data_as<float>()[i] = bf16_to_f32(host.data_as<uint16_t>()[i]);
  return out;
}

Tensor int_tensor(const std::vector<int32_t>& values) {
  Tensor t = Tensor::host(DType::kI32, {static_cast<int64_t>(values.size())});
  std::memcpy(t.data(), values.data(), values.size() * 4);
  return t;
}

Tensor host_copy(const Tensor& t) {
  Tensor out = Tensor::host(t.dtype(), t.shape());
  std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

CompareResult compare(const Tensor& got, const Tensor& ref) {
  CompareResult r;
  double num = 0, den = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.data_as<float>()[i], e = ref.data_as<float>()[i];
    if (!std::isfinite(g)) r.finite = false;
    num += (g - e) * (g - e);
    den += e * e;
  }
  r.rel_l2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return r;
}

void expect_close(Backend& gpu, const Tensor& got, const Tensor& ref, double tol, const std::string& what) {
  ASSERT_EQ(got.numel(), ref.numel()) << what;
  const CompareResult r = compare(as_f32_host(gpu, got), ref);
  EXPECT_TRUE(r.finite) << what << ": non-finite values (unwritten output?)";
  EXPECT_LT(r.rel_l2, tol) << what;
}

void CudaOpTest::SetUp() {
  gpu_ = make_cuda_backend(0);
  if (!gpu_)
    GTEST_SKIP() << (cuda_backend_compiled() ? "no CUDA GPU visible" : "built without CUDA")
                 << ": CUDA op tests skipped";
}

Tensor CudaOpTest::poisoned(DType dtype, Shape shape) {
  Tensor t = gpu_->empty(dtype, shape);
  gpu_->fill_bytes(t, 0xFF);
  return t;
}

void CudaOpTest::expect_gated_accumulate_matches(const Tensor& weight, const Tensor& gpu_weight, int64_t m,
                                                 uint64_t seed) {
  const int64_t n = weight.dim(0), k = weight.dim(1);
  const Tensor x = random_rounded({m, 2 * k}, seed, -3.f, 3.f), gx = gpu_bf16(x);
  const Tensor residual = random_rounded({m, n}, seed + 1, -4.f, 4.f);
  Tensor ref = Tensor::host(DType::kF32, {m, n});
  std::memcpy(ref.data(), residual.data(), static_cast<size_t>(residual.numel()) * sizeof(float));
  ops::linear(x, weight, Tensor(), ref,
              {.gated_input = ops::Activation::kSilu, .gated_scratch = Tensor::host(DType::kF32, {m, k}),
               .accumulate = true});
  Tensor out = gpu_bf16(residual);
  ops::linear(gx, gpu_weight, Tensor(), out,
              {.gated_input = ops::Activation::kSilu, .gated_scratch = poisoned(DType::kBF16, {m, k}), .accumulate = true});
  expect_close(*gpu_, out, ref, kBf16Tolerance, "gated accumulate m=" + std::to_string(m));
}

}  // namespace strata::test
