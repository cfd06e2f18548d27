#include "strata/model/layers/vocab_parallel.h"

#include "strata/core/error.h"
#include "strata/ops/embedding.h"
#include "strata/ops/linear.h"
#include "strata/ops/vocab_shards.h"
#include "strata/parallel/communicator.h"

namespace strata {

VocabShard vocab_shard(int64_t vocab_size, const TensorShard& shard) {
  STRATA_CHECK(vocab_size > 0 && shard.size >= 1 && shard.rank >= 0 && shard.rank < shard.size);
  if (shard.size == 1) return {.vocab_size = vocab_size, .padded_vocab_size = vocab_size, .end = vocab_size};
  const int64_t multiple = kVocabPadding * shard.size;
  const int64_t padded = (vocab_size + multiple - 1) / multiple * multiple;
  const int64_t rows = padded / shard.size;
  return {.vocab_size = vocab_size,
          .padded_vocab_size = padded,
          .begin = shard.rank * rows,
          .end = (shard.rank + 1) * rows,
          .num_ranks = shard.size};
}

Tensor vocab_rows(const ModelWeights& weights, const std::string& name, int64_t hidden, const VocabShard& vocab,
                  bool widened) {
  const Shape shape{vocab.vocab_size, hidden};
  if (!vocab.split()) return widened ? weights.get_widened(name, shape) : weights.get(name, shape);
  return weights.padded_rows(name, shape, vocab.begin, vocab.end, widened);
}

std::function<Tensor()> whole_table_loader(const ModelWeights& weights, const std::string& name, int64_t hidden,
                                           const VocabShard& vocab) {
  if (!vocab.split()) return {};
  return [&weights, name, shape = Shape{vocab.vocab_size, hidden}] { return weights.get_widened(name, shape); };
}

std::optional<Tensor> find_vocab_rows(const ModelWeights& weights, const std::string& name, int64_t hidden,
                                      const VocabShard& vocab, bool dummy_absent) {
  if (!vocab.split()) return weights.find(name, {vocab.vocab_size, hidden}, dummy_absent);
  const bool present = weights.is_dummy() ? !dummy_absent : !weights.names_under(name).empty();
  if (!present) return std::nullopt;
  return vocab_rows(weights, name, hidden, vocab, /*widened=*/false);
}

void embed_tokens(const Tensor& table, const VocabShard& vocab, const Tensor& ids, const Tensor& out,
                  ForwardContext& ctx) {
  if (!vocab.split()) return ops::embedding(table, ids, out);
  STRATA_CHECK(ctx.tensor_parallel != nullptr && ctx.tensor_parallel->world_size() == vocab.num_ranks);
  ops::embedding_shard(table, ids, vocab.begin, out);
  ctx.tensor_parallel->all_reduce_sum(out);
}

void lm_head_logits(const Tensor& x, const Tensor& head, const Tensor& bias, const VocabShard& vocab,
                    const Tensor& logits, ForwardContext& ctx) {
  if (!vocab.split()) return ops::linear(x, head, bias, logits);
  STRATA_CHECK(ctx.tensor_parallel != nullptr && ctx.tensor_parallel->world_size() == vocab.num_ranks);
  STRATA_CHECK(!bias.defined() && head.dim(0) == vocab.num_rows());
  const int64_t num_tokens = x.dim(0), rows = vocab.num_rows();
  Tensor local = ctx.step_workspace.alloc(DType::kF32, {num_tokens, rows});  // [T, Vp / N]
  ops::linear(x, head, Tensor(), local);
  Tensor gathered = ctx.step_workspace.alloc(DType::kF32, {vocab.num_ranks * num_tokens, rows});  // [N * T, Vp / N]
  ctx.tensor_parallel->all_gather_rows(local, gathered);
  ops::join_vocab_shards(gathered.reshape({vocab.num_ranks, num_tokens, rows}), logits);
}

}  // namespace strata
