// The logits adjustments before sampling on the GPU against the CPU, exactly: add_logit_bias
// (entries on several rows, some outside the logits) and mask_logits after it, on a Qwen-size
// vocabulary.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ops/cuda_op_support.h"
#include "strata/ops/logit_bias.h"
#include "strata/ops/logits_mask.h"

namespace strata {
namespace {

class CudaLogitBias : public test::CudaOpTest {};

TEST_F(CudaLogitBias, BiasThenMaskEqualTheCpu) {
  constexpr int64_t kRows = 6, kVocab = 151936, kWords = (kVocab + 31) / 32;
  const Tensor logits = test::random_rounded({kRows, kVocab}, 21, -12.0f, 12.0f);
  std::vector<int32_t> targets;
  std::vector<float> biases;
  for (int32_t k = 0; k < 500; ++k) {
    targets.insert(targets.end(), {k % 5, (k * 7919) % static_cast<int32_t>(kVocab)});
    biases.push_back(static_cast<float>(k % 201 - 100));
  }
  targets.insert(targets.end(), {0, static_cast<int32_t>(kVocab), kRows, 3});  // outside: skipped
  biases.insert(biases.end(), {5.0f, 5.0f});
  const int64_t num = static_cast<int64_t>(biases.size());
  const Tensor t = Tensor::view(targets.data(), DType::kI32, {num, 2});
  const Tensor b = Tensor::view(biases.data(), DType::kF32, {num});
  std::vector<int32_t> mask_rows = {1, 4}, bits(2 * kWords);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<int32_t>(0x9E3779B9u * static_cast<uint32_t>(i + 1));
  const Tensor rows = Tensor::view(mask_rows.data(), DType::kI32, {2});
  const Tensor mask = Tensor::view(bits.data(), DType::kI32, {2, kWords});

  Tensor gpu_logits = gpu_copy(logits);
  ops::add_logit_bias(gpu_logits, gpu_copy(t), gpu_copy(b));
  ops::mask_logits(gpu_logits, gpu_copy(rows), gpu_copy(mask));
  ops::add_logit_bias(logits, t, b);
  ops::mask_logits(logits, rows, mask);
  const Tensor got = gpu_->to_host(gpu_logits);
  EXPECT_EQ(std::memcmp(got.data(), logits.data(), kRows * kVocab * sizeof(float)), 0);
}

}  // namespace
}  // namespace strata
