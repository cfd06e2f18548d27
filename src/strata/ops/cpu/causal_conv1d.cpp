// Depthwise causal conv1d: channels are split into blocks across threads; each block keeps its
// K-1 history rows and transposed weights in scratch, so the token loop runs over contiguous
// channels and reads x[t] before writing out[t] (in-place safe).
#include "strata/ops/cpu/causal_conv1d.h"
#include "strata/ops/causal_conv1d.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/core/error.h"
#include "strata/core/parallel.h"

namespace strata::cpu {
namespace {

constexpr int64_t kChannelBlock = 64;

struct BlockScratch {
  std::vector<float> weight;   // [kernel_size, block]: weight transposed
  std::vector<float> history;  // [kernel_size - 1, block]: oldest input first
  std::vector<float> cur;      // [block]: x[t] of the block
};

void load_block(const CausalConv1dParams& p, int64_t c0, int64_t nc, BlockScratch& s) {
  const int64_t k = p.kernel_size, hist = k - 1;
  s.weight.resize(k * nc), s.history.resize(hist * nc), s.cur.resize(nc);
  for (int64_t c = 0; c < nc; ++c) {
    for (int64_t j = 0; j < k; ++j) s.weight[j * nc + c] = p.weight[(c0 + c) * k + j];
    for (int64_t j = 0; j < hist; ++j) s.history[j * nc + c] = p.conv_state[(c0 + c) * hist + j];
  }
}

void store_history(const CausalConv1dParams& p, int64_t c0, int64_t nc, const BlockScratch& s,
                   float* dst) {  // dst: [channels, kernel_size - 1]
  const int64_t hist = p.kernel_size - 1;
  for (int64_t c = 0; c < nc; ++c)
    for (int64_t j = 0; j < hist; ++j) dst[(c0 + c) * hist + j] = s.history[j * nc + c];
}

void conv_block(const CausalConv1dParams& p, int64_t c0, int64_t nc, BlockScratch& s) {
  const int64_t k = p.kernel_size, hist = k - 1;
  const int64_t x_stride = p.x_row_stride > 0 ? p.x_row_stride : p.channels;
  load_block(p, c0, nc, s);
  for (int64_t t = 0; t < p.num_tokens; ++t) {
    std::copy_n(p.x + t * x_stride + c0, nc, s.cur.data());
    float* out = p.out + t * p.channels + c0;
    for (int64_t c = 0; c < nc; ++c) {
      float acc = 0.f;
      for (int64_t j = 0; j < hist; ++j) acc += s.history[j * nc + c] * s.weight[j * nc + c];
      acc += s.cur[c] * s.weight[hist * nc + c];
      if (p.bias != nullptr) acc += p.bias[c0 + c];
      out[c] = p.silu ? acc / (1.f + std::exp(-acc)) : acc;
    }
    if (hist > 0) {
      std::copy(s.history.begin() + nc, s.history.end(), s.history.begin());
      std::copy_n(s.cur.data(), nc, s.history.data() + (hist - 1) * nc);
    }
    if (p.intermediate_conv_states != nullptr) {
      store_history(p, c0, nc, s, p.intermediate_conv_states + t * p.channels * hist);
    }
  }
  store_history(p, c0, nc, s, p.conv_state);
}

}  // namespace

void validate(const CausalConv1dParams& p) {
  if (p.num_tokens < 0) fail("causal_conv1d: num_tokens is {}; it must be >= 0", p.num_tokens);
  if (p.channels <= 0 || p.kernel_size <= 0) {
    fail("causal_conv1d: channels {} and kernel_size {} must be > 0", p.channels, p.kernel_size);
  }
  if (p.x_row_stride < 0 || (p.x_row_stride != 0 && p.x_row_stride < p.channels)) {
    fail("causal_conv1d: x_row_stride is {}; it must be 0 (packed) or at least channels {}",
         p.x_row_stride, p.channels);
  }
  if (p.weight == nullptr || (p.kernel_size > 1 && p.conv_state == nullptr)) {
    fail("causal_conv1d: weight and conv_state must be set");
  }
  if (p.num_tokens > 0 && (p.x == nullptr || p.out == nullptr)) {
    fail("causal_conv1d: x and out must be set for {} tokens", p.num_tokens);
  }
  if (p.out == p.x && p.x_row_stride != 0 && p.x_row_stride != p.channels) {
    fail("causal_conv1d: out may alias x only when x is packed (x_row_stride {} != channels {})",
         p.x_row_stride, p.channels);
  }
}

void causal_conv1d(const CausalConv1dParams& p) {
  validate(p);
  if (p.num_tokens == 0) return;
  const int64_t num_blocks = (p.channels + kChannelBlock - 1) / kChannelBlock;
  parallel_for(num_blocks, 4, [&](int64_t begin, int64_t end) {
    BlockScratch s;
    for (int64_t b = begin; b < end; ++b) {
      const int64_t c0 = b * kChannelBlock;
      conv_block(p, c0, std::min(kChannelBlock, p.channels - c0), s);
    }
  });
}

}  // namespace strata::cpu

namespace strata::cpu {

namespace {

void causal_conv1d_one(const ops::CausalConv1dArgs& args, int64_t t0, int64_t t1, float* conv_state) {
  const int64_t c = args.x.dim(1);
  const CausalConv1dParams p{
      .x = args.x.data_as<float>() + t0 * c,
      .weight = args.weight.data_as<float>(),
      .bias = args.bias.defined() ? args.bias.data_as<float>() : nullptr,
      .conv_state = conv_state,
      .out = args.out.data_as<float>() + t0 * c,
      .intermediate_conv_states =
          args.intermediate_states.defined() ? args.intermediate_states.data_as<float>() : nullptr,
      .num_tokens = t1 - t0,
      .channels = c,
      .kernel_size = args.weight.dim(1),
      .silu = args.silu};
  causal_conv1d(p);
}

}  // namespace

// Batched decode is exactly the per-row call for every token with its slot's state.
void causal_conv1d(const ops::CausalConv1dArgs& args) {
  STRATA_CHECK(args.x.dtype() == DType::kF32 && args.out.dtype() == DType::kF32);
  const int64_t t = args.x.dim(0);
  if (t == 0) return;
  if (!args.state_slots.defined()) return causal_conv1d_one(args, 0, t, args.conv_state.data_as<float>());
  const int64_t num_slots = args.conv_state.dim(0), slot_elems = args.conv_state.dim(1) * args.conv_state.dim(2);
  for (int64_t r = 0; r < t; ++r) {
    const int32_t slot = args.state_slots.data_as<int32_t>()[r];
    if (slot < 0 || slot >= num_slots)
      fail("causal_conv1d: state_slots[{}] is {}, outside the {} slots of conv_state", r, slot, num_slots);
    causal_conv1d_one(args, r, r + 1, args.conv_state.data_as<float>() + slot * slot_elems);
  }
}

}  // namespace strata::cpu
