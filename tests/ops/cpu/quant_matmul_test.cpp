// quant_matmul against dequantize + a double-precision naive matmul, for every weight
// dtype on both paths. Weights are random bytes with sane f16 scales written over the
// scale fields, so every bit pattern of the quants is exercised.
#include "strata/ops/cpu/quant_matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "strata/core/error.h"
#include "strata/weights/dequantize.h"
#include "strata/weights/gguf_file.h"

namespace strata::cpu {
namespace {

// Byte offsets of the f16 scale/min fields inside one block of each quantized type.
std::vector<int> half_fields(DType dtype) {
  switch (dtype) {
    case DType::kQ4_1: case DType::kQ5_1: case DType::kQ4_K: case DType::kQ5_K: return {0, 2};
    case DType::kQ6_K: return {208};
    case DType::kQ8_K: return {};
    default: return {0};
  }
}

std::vector<uint8_t> random_weights(DType dtype, int64_t rows, int64_t in, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(0.002f, 0.02f);
  const int64_t num_blocks = rows * in / dtype_block_elems(dtype);
  const int64_t block_bytes = dtype_block_bytes(dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(num_blocks * block_bytes));
  if (!is_quantized(dtype)) {
    std::uniform_real_distribution<float> value(-1.f, 1.f);
    for (int64_t i = 0; i < rows * in; ++i) {
      const float v = value(rng);
      if (dtype == DType::kF32) std::memcpy(&bytes[i * 4], &v, 4);
      const uint16_t h = dtype == DType::kF16 ? f32_to_f16(v) : f32_to_bf16(v);
      if (dtype != DType::kF32) std::memcpy(&bytes[i * 2], &h, 2);
    }
    return bytes;
  }
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (int64_t b = 0; b < num_blocks; ++b) {
    uint8_t* blk = &bytes[b * block_bytes];
    for (int off : half_fields(dtype)) {
      const uint16_t h = f32_to_f16((rng() % 2 ? -1.f : 1.f) * scale(rng));
      std::memcpy(blk + off, &h, 2);
    }
    if (dtype == DType::kQ8_K) {
      const float d = scale(rng);
      std::memcpy(blk, &d, 4);
    }
  }
  return bytes;
}

struct Case {
  DType dtype;
  int64_t num_tokens, in, out;
  QuantMatmulPath path;
};

// w: c.dtype [c.out, c.in] block rows.
void check(const Case& c, const uint8_t* w) {
  SCOPED_TRACE(fmt::format("{} tokens={} in={} out={} path={}", dtype_name(c.dtype), c.num_tokens,
                           c.in, c.out, static_cast<int>(c.path)));
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(c.num_tokens * c.in);
  for (float& v : x) v = normal(rng);
  std::fill(x.begin(), x.begin() + 32, 0.f);  // an all-zero activation block
  std::vector<float> y(c.num_tokens * c.out, NAN);
  quant_matmul({.x = x.data(), .w = w, .y = y.data(), .w_dtype = c.dtype,
                .num_tokens = c.num_tokens, .in_features = c.in, .out_features = c.out,
                .path = c.path});

  const QuantMatmulPath used =
      c.path == QuantMatmulPath::kAuto ? pick_quant_matmul_path(c.dtype, c.num_tokens) : c.path;
  // The GEMM path rounds activations as the int16 path does (batch invariance).
  const bool int16 = used == QuantMatmulPath::kInt16Dot ||
                     (used == QuantMatmulPath::kDequantGemm && quant_matmul_has_int16_path(c.dtype));
  const int64_t row_bytes = dtype_bytes(c.dtype, c.in);
  std::vector<float> row(c.in);
  double err2 = 0, ref2 = 0;
  for (int64_t o = 0; o < c.out; ++o) {
    dequantize_row(c.dtype, w + o * row_bytes, row.data(), c.in);
    for (int64_t t = 0; t < c.num_tokens; ++t) {
      const float* xt = x.data() + t * c.in;
      double ref = 0, abs_sum = 0, rounding = 0;
      for (int64_t i = 0; i < c.in; ++i) {
        ref += static_cast<double>(row[i]) * xt[i];
        abs_sum += std::fabs(static_cast<double>(row[i]) * xt[i]);
      }
      // The int16 path rounds each activation to its block's step amax/32767: an error of
      // at most half a step (plus a hair for the float step itself) per element.
      for (int64_t b = 0; int16 && b < c.in / 32; ++b) {
        double amax = 0, wsum = 0;
        for (int i = 0; i < 32; ++i) {
          amax = std::max(amax, static_cast<double>(std::fabs(xt[b * 32 + i])));
          wsum += std::fabs(row[b * 32 + i]);
        }
        rounding += 0.51 * amax / 32767 * wsum;
      }
      // Both paths then sum in f32: allow 1e-5 of the sum of absolute products.
      const double tol = rounding + 1e-5 * abs_sum + 1e-6;
      const float got = y[t * c.out + o];
      ASSERT_LE(std::fabs(got - ref), tol) << "o=" << o << " t=" << t << " ref=" << ref;
      err2 += (got - ref) * (got - ref);
      ref2 += ref * ref;
    }
  }
  // Quantisation noise of 16-bit activations is well under 1e-4 of the output's norm.
  EXPECT_LT(std::sqrt(err2 / ref2), int16 ? 1e-4 : 1e-6);
}

void check(const Case& c) { check(c, random_weights(c.dtype, c.out, c.in, 11).data()); }

// A row's output does not depend on how many other rows share its call: the int16 dots
// (few tokens) and the GEMM (many tokens) agree to f32 rounding, so seeded sampling is the
// same alone or in a batch.
TEST(QuantMatmulTest, RowResultIsBatchInvariant) {
  for (DType dtype : {DType::kQ8_0, DType::kQ4_1, DType::kQ4_K, DType::kQ6_K}) {
    const int64_t in = 512, out = 64, tokens = 40;
    const std::vector<uint8_t> w = random_weights(dtype, out, in, 3);
    std::mt19937 rng(9);
    std::normal_distribution<float> normal(0.f, 1.f);
    std::vector<float> x(tokens * in), batched(tokens * out), alone(out);
    for (float& v : x) v = normal(rng);
    quant_matmul({.x = x.data(), .w = w.data(), .y = batched.data(), .w_dtype = dtype,
                  .num_tokens = tokens, .in_features = in, .out_features = out});
    quant_matmul({.x = x.data() + 7 * in, .w = w.data(), .y = alone.data(), .w_dtype = dtype,
                  .num_tokens = 1, .in_features = in, .out_features = out});
    for (int64_t o = 0; o < out; ++o)
      EXPECT_NEAR(batched[7 * out + o], alone[o], 1e-4 * (1 + std::fabs(alone[o]))) << dtype_name(dtype);
  }
}

TEST(QuantMatmulTest, Int16PathMatchesDequantizedReference) {
  for (DType dtype : {DType::kQ8_0, DType::kQ4_1, DType::kQ4_K, DType::kQ6_K}) {
    ASSERT_TRUE(quant_matmul_has_int16_path(dtype));
    for (int64_t tokens : {1, 3}) check({dtype, tokens, 512, 37, QuantMatmulPath::kAuto});
  }
  check({DType::kQ8_0, 2, 96, 5, QuantMatmulPath::kAuto});
  check({DType::kQ4_1, 2, 96, 5, QuantMatmulPath::kAuto});
}

TEST(QuantMatmulTest, DequantizePathForEveryDtype) {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ4_0, DType::kQ4_1,
                      DType::kQ5_0, DType::kQ5_1, DType::kQ8_0, DType::kQ4_K, DType::kQ5_K,
                      DType::kQ6_K, DType::kQ8_K}) {
    check({dtype, 2, 512, 19, QuantMatmulPath::kDequantFma});
  }
  check({DType::kQ5_0, 1, 512, 19, QuantMatmulPath::kAuto});  // no int16 path: falls back
}

TEST(QuantMatmulTest, ManyTokensUseDequantizedTilesAndSgemm) {
  // 300 output rows span two 256-row tiles.
  check({DType::kQ4_K, kQuantGemmMinTokens, 512, 300, QuantMatmulPath::kAuto});
  check({DType::kQ8_0, 40, 96, 300, QuantMatmulPath::kAuto});
  check({DType::kF16, 3, 64, 7, QuantMatmulPath::kDequantGemm});
}

TEST(QuantMatmulTest, PicksPathByTokensAndDtype) {
  EXPECT_EQ(pick_quant_matmul_path(DType::kQ4_1, 1), QuantMatmulPath::kInt16Dot);
  EXPECT_EQ(pick_quant_matmul_path(DType::kQ6_K, kQuantGemmMinTokens - 1), QuantMatmulPath::kInt16Dot);
  EXPECT_EQ(pick_quant_matmul_path(DType::kQ5_0, 1), QuantMatmulPath::kDequantFma);
  EXPECT_EQ(pick_quant_matmul_path(DType::kQ4_1, kQuantGemmMinTokens), QuantMatmulPath::kDequantGemm);
  EXPECT_EQ(pick_quant_matmul_path(DType::kF16, 1000), QuantMatmulPath::kDequantGemm);
}

TEST(QuantMatmulTest, RealSmolLm2Weights) {
  const char* home = std::getenv("HOME");
  const std::string path = std::string(home ? home : "") + "/.cache/strata/models/smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  const GgufFile file(path);
  const GgufTensorInfo* gate = file.find_tensor("blk.0.ffn_gate.weight");  // q4_1 [1536, 576]
  const GgufTensorInfo* down = file.find_tensor("blk.5.ffn_down.weight");  // q4_1 [576, 1536]
  const GgufTensorInfo* embd = file.find_tensor("token_embd.weight");      // q8_0 [49152, 576]
  ASSERT_TRUE(gate && down && embd);
  check({DType::kQ4_1, 2, 576, 1536, QuantMatmulPath::kAuto}, static_cast<const uint8_t*>(gate->data));
  check({DType::kQ4_1, 2, 1536, 576, QuantMatmulPath::kAuto}, static_cast<const uint8_t*>(down->data));
  check({DType::kQ8_0, 2, 576, 300, QuantMatmulPath::kAuto}, static_cast<const uint8_t*>(embd->data));
}

TEST(QuantMatmulTest, RejectsBadShapesAndDtypes) {
  std::vector<uint8_t> w(1024);
  std::vector<float> x(64), y(4);
  QuantMatmulParams p{.x = x.data(), .w = w.data(), .y = y.data(), .w_dtype = DType::kQ4_K,
                      .num_tokens = 1, .in_features = 64, .out_features = 1};
  EXPECT_THROW(quant_matmul(p), Error);  // 64 is not a multiple of 256
  p.w_dtype = DType::kI32;
  EXPECT_THROW(quant_matmul(p), Error);
  p.w_dtype = DType::kQ5_0;
  p.path = QuantMatmulPath::kInt16Dot;
  EXPECT_THROW(quant_matmul(p), Error);  // Q5_0 has no int16 path
}

}  // namespace
}  // namespace strata::cpu
