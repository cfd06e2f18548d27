// Qwen4-Exp's PLE n-gram ids and gate, as transformers' Qwen4ExpTextNGramEmbedding and
// Qwen4ExpTextPLELayer compute them (int64 arithmetic that wraps, Python's modulo).
#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/parallel.h"
#include "strata/ops/per_layer_embedding.h"

namespace strata::cpu {
namespace {

constexpr int32_t kHalf = 2048;  // 11 bits: every half is exact in f16

// The carry's tokens, oldest first; -1 for none.
void read_carry(const float* carry, int64_t n, std::vector<int32_t>& history) {
  for (int64_t i = 0; i < n; ++i)
    history[i] = static_cast<int32_t>(carry[2 * i]) * kHalf + static_cast<int32_t>(carry[2 * i + 1]) - 1;
}

void write_carry(const std::vector<int32_t>& history, int64_t n, float* carry) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t stored = history[i] + 1;
    carry[2 * i] = static_cast<float>(stored / kHalf);
    carry[2 * i + 1] = static_cast<float>(stored % kHalf);
  }
}

int64_t python_mod(int64_t value, int64_t modulus) {
  const int64_t r = value % modulus;
  return r < 0 ? r + modulus : r;
}

// The ids of `token` after `history` (the last ngram_size - 1 tokens, oldest first).
void ids_of(const ops::NgramHash& hash, const std::vector<int32_t>& history, int32_t token, int32_t* out) {
  const int64_t n = hash.ngram_size;
  uint64_t mixed = static_cast<uint64_t>(token) * static_cast<uint64_t>(hash.multipliers[0]);
  bool cut = false;  // an end of sequence (or of the history) lies between the token and shift k
  for (int64_t k = 1; k < n; ++k) {
    const int32_t previous = history[n - 1 - k];
    cut = cut || previous < 0 || previous == hash.eos_token_id;
    const int64_t shifted = cut ? hash.eos_token_id : previous;
    mixed ^= static_cast<uint64_t>(shifted) * static_cast<uint64_t>(hash.multipliers[k]);
    for (int64_t j = 0; j < hash.heads_per_ngram; ++j) {
      const int64_t head = (k - 1) * hash.heads_per_ngram + j;
      out[head] = static_cast<int32_t>(python_mod(static_cast<int64_t>(mixed), hash.vocab_sizes[head]) +
                                       hash.offsets[head]);
    }
  }
}

void push(std::vector<int32_t>& history, int32_t token) {
  std::rotate(history.begin(), history.begin() + 1, history.end());
  history.back() = token;
}

}  // namespace

void ngram_ids(const ops::NgramHash& hash, const ops::NgramIdsArgs& args) {
  const int64_t t = args.token_ids.numel(), n = hash.ngram_size - 1, elems = hash.carry_elems();
  const int32_t* tokens = args.token_ids.data_as<int32_t>();
  int32_t* out = args.out.data_as<int32_t>();
  float* carry = args.carry.data_as<float>();
  std::vector<int32_t> history(n);
  if (args.state_slots.defined()) {  // every token is its own sequence
    for (int64_t i = 0; i < t; ++i) {
      float* own = carry + static_cast<int64_t>(args.state_slots.data_as<int32_t>()[i]) * elems;
      read_carry(own, n, history);
      ids_of(hash, history, tokens[i], out + i * hash.num_heads());
      push(history, tokens[i]);
      write_carry(history, n, own);
    }
    return;
  }
  read_carry(carry, n, history);
  for (int64_t i = 0; i < t; ++i) {
    ids_of(hash, history, tokens[i], out + i * hash.num_heads());
    push(history, tokens[i]);
    if (args.intermediate_states.defined())
      write_carry(history, n, args.intermediate_states.data_as<float>() + i * elems);
  }
  write_carry(history, n, carry);
}

void ple_gate(const Tensor& key, const Tensor& query, const Tensor& value, const Tensor& out) {
  const int64_t t = key.dim(0), streams = key.dim(1), hidden = key.dim(2);
  const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(hidden));
  parallel_for(t, 16, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const float* v = value.data_as<float>() + row * hidden;
      for (int64_t j = 0; j < streams; ++j) {
        const int64_t base = (row * streams + j) * hidden;
        float g = 0.f;
        for (int64_t i = 0; i < hidden; ++i) g += key.data_as<float>()[base + i] * query.data_as<float>()[base + i];
        g *= inv_sqrt;
        const float sign = g > 0.f ? 1.f : (g < 0.f ? -1.f : 0.f);
        const float gate = 1.0f / (1.0f + std::exp(-sign * std::sqrt(std::max(std::fabs(g), 1e-6f))));
        for (int64_t i = 0; i < hidden; ++i) out.data_as<float>()[base + i] = gate * v[i];
      }
    }
  });
}

}  // namespace strata::cpu
