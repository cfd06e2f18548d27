// The vocabulary split over tensor-parallel ranks: the padding rule's exact row ranges, each
// rank loading only its rows (tied tables sharing one shard), and the lookup and LM head over 2
// and 4 ranks (threads with a shared-memory communicator) equal to one rank's, padding included.
// The fixtures' logits with split vocabularies are in tests/model/tensor_parallel_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>

#include <fmt/format.h>

#include "parallel/rank_threads_support.h"
#include "strata/core/error.h"
#include "strata/model/layers/vocab_parallel.h"
#include "strata/model/model_loader.h"
#include "strata/parallel/communicator.h"
#include "test_support.h"

namespace strata::test {
namespace {

void expect_shard(const VocabShard& s, int64_t padded, int64_t begin, int64_t end, int64_t vocab_rows) {
  EXPECT_EQ(s.padded_vocab_size, padded);
  EXPECT_EQ(s.begin, begin);
  EXPECT_EQ(s.end, end);
  EXPECT_EQ(s.num_vocab_rows(), vocab_rows);
}

TEST(VocabShard, PadsToSixtyFourRowsPerRankAndSplitsEvenly) {
  const VocabShard one = vocab_shard(151936, {.rank = 0, .size = 1});
  EXPECT_FALSE(one.split());
  expect_shard(one, 151936, 0, 151936, 151936);
  // Qwen3's 151936 over 4 ranks: padded to 594 * 256 = 152064, 38016 rows each; the last holds 128 padding rows.
  expect_shard(vocab_shard(151936, {.rank = 0, .size = 4}), 152064, 0, 38016, 38016);
  expect_shard(vocab_shard(151936, {.rank = 3, .size = 4}), 152064, 114048, 152064, 37888);
  // Llama-2's 32000 over 8 ranks: 32256, 4032 each.
  expect_shard(vocab_shard(32000, {.rank = 7, .size = 8}), 32256, 28224, 32256, 3776);
  // 512 over 2: no padding.
  expect_shard(vocab_shard(512, {.rank = 1, .size = 2}), 512, 256, 512, 256);
  // 300 over 2: 384, rank 1 holds 108 tokens and 84 padding rows; over 4: 512, rank 3 padding only.
  expect_shard(vocab_shard(300, {.rank = 1, .size = 2}), 384, 192, 384, 108);
  expect_shard(vocab_shard(300, {.rank = 2, .size = 4}), 512, 256, 384, 44);
  const VocabShard last = vocab_shard(300, {.rank = 3, .size = 4});
  EXPECT_TRUE(last.split());
  EXPECT_EQ(last.num_ranks, 4);
  expect_shard(last, 512, 384, 512, 0);
}

bool same_rows(const Tensor& part, int64_t part_row, const Tensor& whole, int64_t whole_row, int64_t count) {
  STRATA_CHECK(part.dtype() == whole.dtype() && part.row_bytes() == whole.row_bytes());
  return std::memcmp(static_cast<const char*>(part.data()) + part_row * part.row_bytes(),
                     static_cast<const char*>(whole.data()) + whole_row * whole.row_bytes(),
                     count * whole.row_bytes()) == 0;
}

// qwen3 ties its LM head to the embedding, llama does not: each rank of 2 holds 256 of the 512
// rows of each table, byte for byte the checkpoint's.
TEST(VocabShard, EachRankLoadsItsRowsOfTheEmbeddingAndHead) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  for (const std::string fixture : {"qwen3", "llama"}) {
    const LoadedModel whole = load_model({.model_path = fixture_path("hf/" + fixture)}, *backend);
    const Model::Parts& w = whole.model->parts();
    for (int rank : {0, 1}) {
      const LoadedModel split =
          load_model({.model_path = fixture_path("hf/" + fixture), .shard = {.rank = rank, .size = 2}}, *backend);
      const Model::Parts& p = split.model->parts();
      EXPECT_EQ(p.vocab.begin, rank * 256);
      ASSERT_EQ(p.embed_tokens.dim(0), 256) << fixture;
      ASSERT_EQ(p.lm_head.dim(0), 256) << fixture;
      EXPECT_TRUE(same_rows(p.embed_tokens, 0, w.embed_tokens, rank * 256, 256)) << fixture << " rank " << rank;
      EXPECT_TRUE(same_rows(p.lm_head, 0, w.lm_head, rank * 256, 256)) << fixture << " rank " << rank;
      EXPECT_EQ(p.lm_head.data() == p.embed_tokens.data(), fixture == "qwen3") << "tied: one shard serves both";
    }
  }
}

// An EAGLE-3 head without an embedding of its own runs whole on rank 0: it reads the target's whole
// table, which a split target loads for it, byte for byte the checkpoint's.
TEST(VocabShard, AnEagle3HeadOfASplitTargetReadsTheWholeEmbedding) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const LoadedModel whole = load_model({.model_path = fixture_path("hf/llama")}, *backend);
  const LoadedModel split = load_model({.model_path = fixture_path("hf/llama"), .shard = {.rank = 0, .size = 2}}, *backend);
  const LoadedModel head = load_eagle3_head(fixture_path("hf/llama_eagle3"), *split.model, *backend);
  const Tensor& table = head.model->parts().embed_tokens;
  ASSERT_EQ(table.shape(), (Shape{512, 128}));
  EXPECT_TRUE(same_rows(table, 0, whole.model->parts().embed_tokens, 0, 512));
  EXPECT_FALSE(head.model->parts().vocab.split());
}

// Dummy weights of a 300-token table over 4 ranks: rank 2 holds tokens 256..299 and 84 zero rows,
// rank 3 zeros only; the padding counts as memory, not as parameters.
TEST(VocabShard, PaddingRowsAreZeros) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const std::string name = "model.embed_tokens.weight";
  const ModelWeights one(nullptr, *backend, {});
  const Tensor whole = one.get(name, {300, 16});
  for (int rank : {2, 3}) {
    const ModelWeights weights(nullptr, *backend, {.shard = {.rank = rank, .size = 4}});
    const VocabShard vocab = vocab_shard(300, weights.shard());
    const Tensor part = vocab_rows(weights, name, 16, vocab, /*widened=*/true);
    ASSERT_EQ(part.shape(), (Shape{128, 16}));
    const int64_t real = vocab.num_vocab_rows();
    EXPECT_TRUE(same_rows(part, 0, whole, vocab.begin, real));
    const Tensor zeros = Tensor::host(part.dtype(), {128 - real, 16});
    std::memset(zeros.data(), 0, zeros.nbytes());
    EXPECT_TRUE(same_rows(part, real, zeros, 0, 128 - real)) << "rank " << rank;
    EXPECT_EQ(weights.num_parameters(), real * 16);
    EXPECT_EQ(weights.num_bytes(), part.nbytes());
  }
}

// A [300, 24] table and a separate [300, 24] head, random; rank r's padded rows of each.
struct Tables {
  Tensor embed = random_f32({300, 24}, 91), head = random_f32({300, 24}, 92);
};

Tensor padded_part(const Tensor& whole, const VocabShard& vocab) {
  Tensor part = Tensor::host(DType::kF32, {vocab.num_rows(), whole.dim(1)});
  std::memset(part.data(), 0, part.nbytes());
  std::memcpy(part.data(), static_cast<const char*>(whole.data()) + vocab.begin * whole.row_bytes(),
              vocab.num_vocab_rows() * whole.row_bytes());
  return part;
}

struct RankOutputs {
  Tensor embeddings;  // [T, 24]
  Tensor logits;      // [T, 300]
};

RankOutputs run_rank(const Tables& tables, const Tensor& ids, const Tensor& x, int rank, int world,
                     const std::string& group) {
  std::unique_ptr<Backend> backend = make_cpu_backend(1);
  const VocabShard vocab = vocab_shard(300, {.rank = rank, .size = world});
  std::unique_ptr<Communicator> comm;
  if (world > 1)
    comm = make_shared_memory_communicator(
        {.rank = rank, .world_size = world, .group_name = group, .timeout = std::chrono::seconds(60)});
  Workspace workspace(*backend), step_workspace(*backend);
  ForwardContext ctx{.backend = *backend, .workspace = workspace, .step_workspace = step_workspace,
                     .tensor_parallel = comm.get()};
  const int64_t t = ids.dim(0);
  RankOutputs out{.embeddings = Tensor::host(DType::kF32, {t, 24}), .logits = Tensor::host(DType::kF32, {t, 300})};
  embed_tokens(padded_part(tables.embed, vocab), vocab, ids, out.embeddings, ctx);
  lm_head_logits(x, padded_part(tables.head, vocab), Tensor(), vocab, out.logits, ctx);
  return out;
}

TEST(VocabParallel, LookupAndHeadOverRanksEqualOneRank) {
  const Tables tables;
  std::vector<int32_t> id_values;
  for (int32_t t = 0; t < 9; ++t) id_values.push_back((t * 131 + 7) % 300);  // every rank's range is hit
  const Tensor ids = Tensor::view(id_values.data(), DType::kI32, {9});
  const Tensor x = random_f32({9, 24}, 93);
  const RankOutputs whole = run_rank(tables, ids, x, 0, 1, "");
  for (int world : {2, 4}) {
    const std::string group = fmt::format("strata-test-vocab-{}-{}", getpid(), per_test_name(std::to_string(world)));
    std::vector<RankOutputs> outs(world);
    run_rank_threads(world, [&](int rank) { outs[rank] = run_rank(tables, ids, x, rank, world, group); });
    for (int r = 0; r < world; ++r) {
      ASSERT_TRUE(outs[r].logits.defined()) << "rank " << r;
      // Each token's row comes from one rank; the others add zeros: exact.
      EXPECT_EQ(max_abs_diff(outs[r].embeddings, whole.embeddings), 0.0f) << world << " ranks, rank " << r;
      // Each logit is one rank's dot product over the same 24 products.
      EXPECT_LT(max_abs_diff(outs[r].logits, whole.logits), 1e-5f) << world << " ranks, rank " << r;
    }
  }
}

}  // namespace
}  // namespace strata::test
