// CUDA twins of Qwen4-Exp's PLE ops (ops/cpu/per_layer_embedding.cpp). ngram_ids: a token's ids
// depend only on the tokens before it, so each thread hashes its own token, reading history from
// the segment or, before it, from the carry; one block per segment so the carry is read before it
// is rewritten; a batched decode step takes one thread per single-token row. ple_gate: one block
// per (token, stream), f32 math.
#include "strata/ops/cuda/activation_types.cuh"
#include "strata/ops/per_layer_embedding.h"

namespace strata::cuda {
namespace {

constexpr int kMaxHistory = static_cast<int>(ops::kCudaMaxNgramSize) - 1;
constexpr int kMaxHeads = static_cast<int>(ops::kCudaMaxNgramHeads);
constexpr int32_t kHalf = 2048;  // the carry's 11-bit halves (see ops/per_layer_embedding.h)

struct NgramParams {
  const int32_t* tokens;  // [T]
  float* carry;           // [carry_elems], or [num_slots, carry_elems] with slots
  int32_t* out;           // [T, heads]
  float* intermediates;   // [T, carry_elems] or null
  const int32_t* slots;   // [T] or null
  int64_t tokens_count, num_slots;
  int history, heads_per_ngram, heads;  // history = ngram_size - 1
  int32_t eos;
  int64_t multipliers[kMaxHistory + 1];
  int64_t vocab_sizes[kMaxHeads], offsets[kMaxHeads];
};

__device__ int32_t read_token(const float* carry, int i) {
  return static_cast<int32_t>(carry[2 * i]) * kHalf + static_cast<int32_t>(carry[2 * i + 1]) - 1;
}

__device__ void write_token(float* carry, int i, int32_t token) {
  const int32_t stored = token + 1;
  carry[2 * i] = static_cast<float>(stored / kHalf);
  carry[2 * i + 1] = static_cast<float>(stored % kHalf);
}

// The token at segment index `at` (negative: the carry's, -1 its newest); -1 for none.
__device__ int32_t token_at(const NgramParams& p, const int32_t* history, int64_t t_base, int64_t at) {
  return at >= 0 ? p.tokens[t_base + at] : history[p.history + at];
}

// Token `at`'s ids (as ops/cpu/per_layer_embedding.cpp ids_of, in wrapping 64-bit arithmetic).
__device__ void hash_token(const NgramParams& p, const int32_t* history, int64_t t_base, int64_t at) {
  uint64_t mixed = static_cast<uint64_t>(p.tokens[t_base + at]) * static_cast<uint64_t>(p.multipliers[0]);
  bool cut = false;
  for (int k = 1; k <= p.history; ++k) {
    const int32_t previous = token_at(p, history, t_base, at - k);
    cut = cut || previous < 0 || previous == p.eos;
    const int64_t shifted = cut ? p.eos : previous;
    mixed ^= static_cast<uint64_t>(shifted) * static_cast<uint64_t>(p.multipliers[k]);
    for (int j = 0; j < p.heads_per_ngram; ++j) {
      const int head = (k - 1) * p.heads_per_ngram + j;
      int64_t r = static_cast<int64_t>(mixed) % p.vocab_sizes[head];
      if (r < 0) r += p.vocab_sizes[head];
      p.out[(t_base + at) * p.heads + head] = static_cast<int32_t>(r + p.offsets[head]);
    }
  }
}

// The carry after token `at`: the last `history` tokens, oldest first.
__device__ void store_carry_after(const NgramParams& p, const int32_t* history, int64_t t_base, int64_t at,
                                  float* carry) {
  for (int i = 0; i < p.history; ++i) write_token(carry, i, token_at(p, history, t_base, at - (p.history - 1) + i));
}

// One sequence segment, one block.
__global__ void ngram_segment_kernel(NgramParams p) {
  __shared__ int32_t history[kMaxHistory];
  if (threadIdx.x < p.history) history[threadIdx.x] = read_token(p.carry, threadIdx.x);
  __syncthreads();
  for (int64_t t = threadIdx.x; t < p.tokens_count; t += blockDim.x) {
    hash_token(p, history, 0, t);
    if (p.intermediates != nullptr) store_carry_after(p, history, 0, t, p.intermediates + t * 2 * p.history);
  }
  __syncthreads();  // every thread has read the carry
  if (threadIdx.x == 0) store_carry_after(p, history, 0, p.tokens_count - 1, p.carry);
}

// Batched decode: token t is a one-token sequence with the carry of slot slots[t].
__global__ void ngram_slots_kernel(NgramParams p) {
  const int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (t >= p.tokens_count) return;
  const int32_t slot = p.slots[t];
  if (slot < 0 || slot >= p.num_slots) return;
  float* carry = p.carry + static_cast<int64_t>(slot) * 2 * p.history;
  int32_t history[kMaxHistory];
  for (int i = 0; i < p.history; ++i) history[i] = read_token(carry, i);
  hash_token(p, history, t, 0);
  store_carry_after(p, history, t, 0, carry);
}

struct GateParams {
  const void* key;    // [T, n, hidden]
  const void* query;  // [T, n, hidden]
  const void* value;  // [T, hidden]
  void* out;          // [T, n, hidden]
  int64_t n, hidden;
};

template <typename T>
__global__ void ple_gate_kernel(GateParams p) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x, t = row / p.n;  // row = t * n + j
  const T* k = static_cast<const T*>(p.key) + row * p.hidden;
  const T* q = static_cast<const T*>(p.query) + row * p.hidden;
  const T* v = static_cast<const T*>(p.value) + t * p.hidden;
  float g = 0.f;
  for (int64_t i = threadIdx.x; i < p.hidden; i += blockDim.x) g += to_f32(k[i]) * to_f32(q[i]);
  g = block_sum(g, scratch) * rsqrtf(static_cast<float>(p.hidden));
  const float sign = g > 0.f ? 1.f : (g < 0.f ? -1.f : 0.f);
  const float gate = 1.0f / (1.0f + expf(-sign * sqrtf(fmaxf(fabsf(g), 1e-6f))));
  T* o = static_cast<T*>(p.out) + row * p.hidden;
  for (int64_t i = threadIdx.x; i < p.hidden; i += blockDim.x) o[i] = from_f32<T>(gate * to_f32(v[i]));
}

}  // namespace

void ngram_ids(const ops::NgramHash& hash, const ops::NgramIdsArgs& args) {
  // refused at model build past these (ops::check_per_layer_embedding_supported)
  STRATA_CHECK(hash.ngram_size <= kMaxHistory + 1 && hash.num_heads() <= kMaxHeads);
  const int64_t t = args.token_ids.numel();
  NgramParams p{.tokens = args.token_ids.data_as<int32_t>(), .carry = args.carry.data_as<float>(),
                .out = args.out.data_as<int32_t>(),
                .intermediates =
                    args.intermediate_states.defined() ? args.intermediate_states.data_as<float>() : nullptr,
                .slots = args.state_slots.defined() ? args.state_slots.data_as<int32_t>() : nullptr,
                .tokens_count = t, .num_slots = args.carry.numel() / hash.carry_elems(),
                .history = static_cast<int>(hash.ngram_size - 1),
                .heads_per_ngram = static_cast<int>(hash.heads_per_ngram),
                .heads = static_cast<int>(hash.num_heads()), .eos = hash.eos_token_id};
  for (int64_t i = 0; i < hash.ngram_size; ++i) p.multipliers[i] = hash.multipliers[i];
  for (int64_t i = 0; i < hash.num_heads(); ++i) p.vocab_sizes[i] = hash.vocab_sizes[i], p.offsets[i] = hash.offsets[i];
  if (p.slots != nullptr) {
    ngram_slots_kernel<<<static_cast<unsigned>(ceil_div(t, 128)), 128, 0, current_stream()>>>(p);
  } else {
    ngram_segment_kernel<<<1, 256, 0, current_stream()>>>(p);
  }
  STRATA_CUDA_CHECK_LAUNCH();
}

void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out) {
  const GateParams p{.key = key.data(), .query = query.data(), .value = value.data(), .out = out.data(),
                     .n = key.dim(1), .hidden = key.dim(2)};
  const unsigned blocks = static_cast<unsigned>(key.dim(0) * key.dim(1));
  for_activation_type(key.dtype(), "ple_gate", [&](auto type) {
    ple_gate_kernel<decltype(type)><<<blocks, 128, 0, current_stream()>>>(p);
  });
}

}  // namespace strata::cuda
