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
  for (const Tensor* x : {&args.carry, &args.out, &args.intermediate_states, &args.state_slots})
    STRATA_CHECK(!x->defined() || x->device() == args.token_ids.device());
  if (t == 0) return;
  STRATA_DISPATCH(args.token_ids.device(), cpu::ngram_ids(hash, args), cuda::ngram_ids(hash, args));
}

void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out) {
  STRATA_CHECK(key.rank() == 3);
  expect_shape(query, key.shape(), "ple_gate query");
  expect_shape(out, key.shape(), "ple_gate out");
  expect_shape(value, {key.dim(0), key.dim(2)}, "ple_gate value");
  expect_activations({&key, &query, &value, &out}, "ple_gate");
  if (out.numel() == 0) return;
  STRATA_DISPATCH(key.device(), cpu::ple_gate(key, query, value, out), cuda::ple_gate(key, query, value, out));
}

void check_per_layer_embedding_supported(Device device, const NgramHash& hash, const std::string& layer) {
  if (device.is_cpu()) return;
  if (hash.ngram_size > kCudaMaxNgramSize || hash.num_heads() > kCudaMaxNgramHeads)
    fail("{}: n-gram size {} with {} hash heads has no CUDA kernel (at most size {} and {} heads); run this model "
         "with --device cpu", layer, hash.ngram_size, hash.num_heads(), kCudaMaxNgramSize, kCudaMaxNgramHeads);
}

}  // namespace strata::ops
