// MRoPE on the CPU: three equal streams rotate exactly as 1-D positions do (text prompts are
// unchanged), and with distinct streams each frequency reads the stream its section names. The
// inverse rotation is the rotation at the negated positions, bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "strata/ops/rope.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(MropeSections, InterleavedAndRunLayoutsNameEachFrequencysStream) {
  const ops::MropeSections qwen3_5{.section = {11, 11, 10}, .interleaved = true};
  std::vector<int> got;
  for (int64_t i = 0; i < 32; ++i) got.push_back(qwen3_5.stream(i));
  // t h w repeated; h stops after 3 * 11 = 33 (past the end), w after 3 * 10 = 30.
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2,
                                   0, 1, 2, 0, 1}));
  const ops::MropeSections runs{.section = {2, 1, 1}, .interleaved = false};
  EXPECT_EQ((std::vector<int>{runs.stream(0), runs.stream(1), runs.stream(2), runs.stream(3)}),
            (std::vector<int>{0, 0, 1, 2}));
  EXPECT_FALSE(ops::MropeSections{}.enabled());
}

struct RopeCase {
  Tensor q, k;
  Tensor inv;
  std::vector<float> inv_freq;
};

RopeCase make_case() {
  RopeCase c{.q = test::random_f32({3, 2, 16}, 21), .k = test::random_f32({3, 1, 16}, 22)};
  c.inv_freq = {1.0f, 0.3f, 0.05f, 0.011f};
  c.inv = Tensor::view(c.inv_freq.data(), DType::kF32, {4});
  return c;
}

const ops::RopeParams kParams{.rotary_dim = 8, .mrope = {.section = {2, 1, 1}, .interleaved = true}};

TEST(MropeOp, EqualStreamsRotateExactlyAsOneDimensionalPositions) {
  RopeCase a = make_case(), b = make_case();
  std::vector<int32_t> pos = {0, 7, 300}, pos3 = {0, 7, 300, 0, 7, 300, 0, 7, 300};
  ops::rope(a.q, a.k, Tensor::view(pos.data(), DType::kI32, {3}), a.inv, kParams);
  ops::rope(b.q, b.k, Tensor::view(pos3.data(), DType::kI32, {3, 3}), b.inv, kParams);
  for (int64_t i = 0; i < a.q.numel(); ++i) ASSERT_EQ(a.q.data_as<float>()[i], b.q.data_as<float>()[i]) << i;
  for (int64_t i = 0; i < a.k.numel(); ++i) ASSERT_EQ(a.k.data_as<float>()[i], b.k.data_as<float>()[i]) << i;
}

TEST(MropeOp, EachFrequencyReadsItsStream) {
  RopeCase c = make_case();
  const Tensor q0 = test::random_f32({3, 2, 16}, 21);
  // Streams (t, h, w) per token; interleaved [2, 1, 1] gives frequencies streams t h w t.
  std::vector<int32_t> pos3 = {4, 5, 9, /*h*/ 4, 6, 11, /*w*/ 4, 7, 13};
  ops::rope(c.q, c.k, Tensor::view(pos3.data(), DType::kI32, {3, 3}), c.inv, kParams);
  const int stream_of[4] = {0, 1, 2, 0};
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 16; ++i) {
        const float* src = q0.data_as<float>() + (t * 2 + h) * 16;
        double ref = src[i];
        if (i < 8) {
          const double angle = static_cast<float>(pos3[stream_of[i % 4] * 3 + t]) * c.inv_freq[i % 4];
          ref = i < 4 ? src[i] * std::cos(angle) - src[i + 4] * std::sin(angle)
                      : src[i] * std::cos(angle) + src[i - 4] * std::sin(angle);
        }
        ASSERT_NEAR(c.q.data_as<float>()[(t * 2 + h) * 16 + i], ref, 1e-5) << t << "," << h << "," << i;
      }
}

TEST(RopeOp, InverseRotatesAsTheNegatedPositions) {
  RopeCase a = make_case(), b = make_case();
  std::vector<int32_t> pos = {3, 70, 4000}, negated = {-3, -70, -4000};
  ops::rope(a.q, a.k, Tensor::view(pos.data(), DType::kI32, {3}), a.inv, {.rotary_dim = 8, .inverse = true});
  ops::rope(b.q, b.k, Tensor::view(negated.data(), DType::kI32, {3}), b.inv, {.rotary_dim = 8});
  for (int64_t i = 0; i < a.q.numel(); ++i) ASSERT_EQ(a.q.data_as<float>()[i], b.q.data_as<float>()[i]) << i;
  for (int64_t i = 0; i < a.k.numel(); ++i) ASSERT_EQ(a.k.data_as<float>()[i], b.k.data_as<float>()[i]) << i;
  ops::rope(a.q, a.k, Tensor::view(pos.data(), DType::kI32, {3}), a.inv, {.rotary_dim = 8});
  const RopeCase original = make_case();
  for (int64_t i = 0; i < a.q.numel(); ++i) ASSERT_NEAR(a.q.data_as<float>()[i], original.q.data_as<float>()[i], 1e-5);
}

}  // namespace
}  // namespace strata
