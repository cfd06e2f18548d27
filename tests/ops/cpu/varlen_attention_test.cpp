// Bidirectional attention within segments: against a double reference, and a token's output
// does not change when another segment's values do; which head sizes a CUDA device is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "strata/core/error.h"
#include "strata/ops/varlen_attention.h"
#include "test_support.h"

namespace strata {
namespace {

TEST(VarlenAttentionOp, EachTokenAttendsToAllOfItsSegmentOnly) {
  const Tensor q = test::random_f32({7, 2, 8}, 51), k = test::random_f32({7, 2, 8}, 52);
  Tensor v = test::random_f32({7, 2, 8}, 53), out = Tensor::host(DType::kF32, {7, 2, 8});
  std::vector<int32_t> cu_seqlens = {0, 3, 7};
  const ops::VarlenSegments cu{.cu_seqlens = Tensor::view(cu_seqlens.data(), DType::kI32, {3}), .max_seqlen = 4};
  ops::varlen_attention(q, k, v, cu, 0.35f, out);
  for (int64_t t = 0; t < 7; ++t)
    for (int64_t h = 0; h < 2; ++h) {
      const int64_t begin = t < 3 ? 0 : 3, end = t < 3 ? 3 : 7;
      std::vector<double> p;
      double sum = 0;
      for (int64_t j = begin; j < end; ++j) {
        double dot = 0;
        for (int i = 0; i < 8; ++i) dot += q.data_as<float>()[(t * 2 + h) * 8 + i] * k.data_as<float>()[(j * 2 + h) * 8 + i];
        p.push_back(std::exp(dot * 0.35));
        sum += p.back();
      }
      for (int i = 0; i < 8; ++i) {
        double ref = 0;
        for (int64_t j = begin; j < end; ++j) ref += p[j - begin] / sum * v.data_as<float>()[(j * 2 + h) * 8 + i];
        ASSERT_NEAR(out.data_as<float>()[(t * 2 + h) * 8 + i], ref, 1e-5) << t << "," << h << "," << i;
      }
    }
  const Tensor before = test::random_f32({7, 2, 8}, 54);
  std::memcpy(before.data(), out.data(), out.nbytes());
  for (int64_t i = 3 * 16; i < 7 * 16; ++i) v.data_as<float>()[i] += 1.0f;  // the second segment only
  ops::varlen_attention(q, k, v, cu, 0.35f, out);
  for (int64_t i = 0; i < 3 * 16; ++i) ASSERT_EQ(out.data_as<float>()[i], before.data_as<float>()[i]) << i;
}

// Checked when a vision block is built: the CUDA kernel takes multiples of 4 up to 128 (Qwen3.5's
// towers use 72); the CPU takes any.
TEST(VarlenAttentionOp, CudaHeadSizesOutsideTheKernelAreRefusedAtBuild) {
  const Device gpu{DeviceType::kCuda, 0};
  for (int64_t head_dim : {16, 64, 72, 80, 128}) EXPECT_NO_THROW(ops::check_varlen_attention_supported(gpu, head_dim, "b"));
  for (int64_t head_dim : {130, 256, 70}) {
    try {
      ops::check_varlen_attention_supported(gpu, head_dim, "model.visual.blocks.0");
      ADD_FAILURE() << "head size " << head_dim << " was taken";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("model.visual.blocks.0: attention head size " + std::to_string(head_dim)),
                std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--device cpu"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(ops::check_varlen_attention_supported(Device{}, 256, "b"));
}

}  // namespace
}  // namespace strata
