// The vocabulary-parallel ops on CUDA against the CPU op on the same random inputs: joining
// gathered logit shards (padding dropped) and a shard's embedding lookup are copies, so they
// agree exactly. Skipped without a GPU.
#include <gtest/gtest.h>

#include <array>

#include "ops/cuda_op_support.h"
#include "strata/ops/embedding.h"
#include "strata/ops/vocab_shards.h"

namespace strata::test {
namespace {

class CudaVocabShards : public CudaOpTest {};

TEST_F(CudaVocabShards, JoinMatchesCpu) {
  // {ranks, tokens, shard columns, vocabulary}: no padding, some, and a last rank of padding only.
  for (const auto& [ranks, tokens, cols, vocab] : std::vector<std::array<int64_t, 4>>{
           {2, 3, 256, 512}, {4, 7, 38016, 151936}, {4, 1, 128, 300}, {8, 130, 64, 500}}) {
    const Tensor shards = random_rounded({ranks, tokens, cols}, 81, -8.f, 8.f);
    Tensor ref = Tensor::host(DType::kF32, {tokens, vocab});
    ops::join_vocab_shards(shards, ref);
    Tensor out = poisoned(DType::kF32, {tokens, vocab});
    ops::join_vocab_shards(gpu_copy(shards), out);
    const CompareResult r = compare(as_f32_host(*gpu_, out), ref);
    EXPECT_TRUE(r.finite) << ranks << " ranks, vocab " << vocab;
    EXPECT_EQ(r.rel_l2, 0.0) << ranks << " ranks, vocab " << vocab;
  }
}

TEST_F(CudaVocabShards, EmbeddingShardMatchesCpu) {
  const Tensor table = random_rounded({128, 256}, 82);  // rows 384..511 of a vocabulary
  std::vector<int32_t> id_values;
  for (int32_t t = 0; t < 40; ++t) id_values.push_back((t * 97 + 5) % 600);  // inside and outside the shard
  const Tensor ids = int_tensor(id_values);
  Tensor ref = Tensor::host(DType::kF32, {40, 256});
  ops::embedding_shard(table, ids, 384, ref);
  Tensor out = poisoned(DType::kBF16, {40, 256});
  ops::embedding_shard(gpu_bf16(table), gpu_copy(ids), 384, out);
  EXPECT_EQ(compare(as_f32_host(*gpu_, out), ref).rel_l2, 0.0) << "bf16";
  Tensor out_f32 = poisoned(DType::kF32, {40, 256});
  ops::embedding_shard(gpu_copy(table), gpu_copy(ids), 384, out_f32);
  const CompareResult r = compare(as_f32_host(*gpu_, out_f32), ref);
  EXPECT_TRUE(r.finite);
  EXPECT_EQ(r.rel_l2, 0.0) << "f32";
}

}  // namespace
}  // namespace strata::test
