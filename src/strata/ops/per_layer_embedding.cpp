#include "strata/ops/per_layer_embedding.h"

#include "strata/core/error.h"
#include "strata/ops/dispatch.h"

namespace strata::ops {

void ngram_ids(const NgramHash& hash, const NgramIdsArgs& args) {
  const int64_t t = args.token_ids.numel(), heads = hash.num_heads(), elems = hash.carry_elems();
  STRATA_CHECK(hash.ngram_size >= 2 && static_cast<int64_t>(hash.multipliers.size()) == hash.ngram_size);
  STRATA_CHECK(static_cast<int64_t>(hash.vocab_sizes.size()) == heads &&
               static_cast<int64_t>(hash.offsets.size()) == heads);
  STRATA_CHECK(args.token_ids.dtype() == DType::kI32 && args.out.dtype() == DType::kI32);
  STRATA_CHECK(args.carry.dtype() == DType::kF32 && args.carry.numel() % elems == 0);
  expect_shape(args.out, {t, heads}, "ngram_ids out");
  if (args.intermediate_states.defined()) expect_shape(args.intermediate_states, {t, elems}, "ngram_ids intermediates");
  if (args.state_slots.defined()) {
    expect_shape(args.state_slots, {t}, "ngram_ids state_slots");
    STRATA_CHECK(!args.intermediate_states.defined());
  } else {
    expect_shape(args.carry, {elems}, "ngram_ids carry");
  }
  STRATA_CHECK_MSG(args.token_ids.device().is_cpu(), "ngram_ids has no CUDA kernel");
  cpu::ngram_ids(hash, args);
}

void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out) {
  STRATA_CHECK(key.rank() == 3);
  expect_shape(query, key.shape(), "ple_gate query");
  expect_shape(out, key.shape(), "ple_gate out");
  expect_shape(value, {key.dim(0), key.dim(2)}, "ple_gate value");
  for (const Tensor* x : {&key, &query, &value, &out})
    STRATA_CHECK_MSG(x->dtype() == DType::kF32 && x->device().is_cpu(), "ple_gate takes f32 CPU tensors");
  cpu::ple_gate(key, query, value, out);
}

void check_per_layer_embedding_supported(Device device, const std::string& layer) {
  if (!device.is_cpu())
    fail("{}: Qwen4-Exp's per-layer n-gram embeddings (ple_layer_ids) have no CUDA kernels yet; run this model with "
         "--device cpu", layer);
}

}  // namespace strata::ops
