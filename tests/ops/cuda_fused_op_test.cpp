// The fused ops of the accelerator path against their CPU twins on the same random inputs:
// prepare_qkv (split, q/k norm, rotary, cache write) and the gated activation over a fused
// gate|up projection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

#include "ops/cuda_op_support.h"
#include "test_support.h"
#include "strata/ops/activation.h"
#include "strata/ops/prepare_qkv.h"
#include "strata/ops/rope.h"

namespace strata::test {
namespace {

using CudaFusedOps = CudaOpTest;

struct QkvCase {
  int64_t tokens, nh, nkv, hd, rotary;
  bool norm;
};

TEST_F(CudaFusedOps, PrepareQkvMatchesCpu) {
  RopeConfig llama3{.rope_type = "llama3", .rope_theta = 500000.0, .factor = 8.0, .low_freq_factor = 1.0,
                    .high_freq_factor = 4.0, .original_max_position_embeddings = 8192};
  for (const QkvCase& c : std::vector<QkvCase>{{1, 32, 8, 128, 128, false}, {37, 32, 8, 128, 128, false},
                                               {300, 32, 4, 128, 128, true}, {9, 16, 2, 256, 64, true},
                                               {5, 4, 2, 32, 32, true}}) {
    const ops::RopeTable table = ops::rope_frequencies(llama3, c.rotary, 131072);
    Tensor inv = Tensor::host(DType::kF32, {c.rotary / 2});
    std::memcpy(inv.data(), table.inv_freq.data(), inv.nbytes());
    const int64_t block_size = 16, num_blocks = (c.tokens + block_size - 1) / block_size + 3;
    const Tensor qkv = random_rounded({c.tokens, (c.nh + 2 * c.nkv) * c.hd}, 50, -2.f, 2.f);
    const Tensor qw = random_rounded({c.hd}, 51, 0.5f, 1.5f), kw = random_rounded({c.hd}, 52, 0.5f, 1.5f);
    std::vector<int32_t> pos, slots(num_blocks * block_size);
    for (int64_t t = 0; t < c.tokens; ++t) pos.push_back(static_cast<int32_t>((t * 7919) % 100000));
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), std::mt19937(55));
    slots.resize(c.tokens);  // distinct slots in a scattered order
    const Shape cache{num_blocks, block_size, c.nkv, c.hd};
    Tensor k_ref = random_rounded(cache, 53), v_ref = random_rounded(cache, 54);
    Tensor q_ref = Tensor::host(DType::kF32, {c.tokens, c.nh, c.hd});
    const ops::PrepareQkvParams params{.rotary_dim = c.rotary, .norm_eps = 1e-6f};
    ops::prepare_qkv({.qkv = qkv, .q_norm = c.norm ? qw : Tensor(), .k_norm = c.norm ? kw : Tensor(),
                      .positions = int_tensor(pos), .inv_freq = inv, .slot_mapping = int_tensor(slots),
                      .k_cache = k_ref, .v_cache = v_ref, .q_out = q_ref},
                     params);
    Tensor k_gpu = gpu_bf16(random_rounded(cache, 53)), v_gpu = gpu_bf16(random_rounded(cache, 54));
    Tensor q_gpu = poisoned(DType::kBF16, {c.tokens, c.nh, c.hd});
    ops::prepare_qkv({.qkv = gpu_bf16(qkv), .q_norm = c.norm ? gpu_bf16(qw) : Tensor(),
                      .k_norm = c.norm ? gpu_bf16(kw) : Tensor(), .positions = gpu_copy(int_tensor(pos)),
                      .inv_freq = gpu_copy(inv), .slot_mapping = gpu_copy(int_tensor(slots)), .k_cache = k_gpu,
                      .v_cache = v_gpu, .q_out = q_gpu},
                     params);
    const std::string what = "prepare_qkv t=" + std::to_string(c.tokens) + " hd=" + std::to_string(c.hd);
    expect_close(*gpu_, q_gpu, q_ref, kBf16Tolerance, what + " q");
    expect_close(*gpu_, k_gpu, k_ref, kBf16Tolerance, what + " k cache");
    expect_close(*gpu_, v_gpu, v_ref, kBf16Tolerance, what + " v cache");
  }
}

// Codes of an e4m3 cache (host or device) as f32.
Tensor e4m3_as_f32(Backend& gpu, const Tensor& codes) {
  const Tensor host = codes.device().is_cpu() ? codes : gpu.to_host(codes);
  Tensor out = Tensor::host(DType::kF32, host.shape());
  for (int64_t i = 0; i < host.numel(); ++i) out.data_as<float>()[i] = fp8_e4m3_to_f32(host.data_as<uint8_t>()[i]);
  return out;
}

// --kv-cache-dtype fp8: k and v narrowed to e4m3 from f32 after norm and rotary, on both sides.
TEST_F(CudaFusedOps, PrepareQkvWritesE4m3Caches) {
  const int64_t tokens = 37, nh = 32, nkv = 8, hd = 128, block_size = 16, num_blocks = 6;
  const ops::RopeTable table = ops::rope_frequencies(RopeConfig{.rope_theta = 1000000.0}, hd, 40960);
  Tensor inv = Tensor::host(DType::kF32, {hd / 2});
  std::memcpy(inv.data(), table.inv_freq.data(), inv.nbytes());
  const Tensor qkv = random_rounded({tokens, (nh + 2 * nkv) * hd}, 70, -2.f, 2.f);
  const Tensor qw = random_rounded({hd}, 71, 0.5f, 1.5f), kw = random_rounded({hd}, 72, 0.5f, 1.5f);
  std::vector<int32_t> pos, slots(num_blocks * block_size);
  for (int64_t t = 0; t < tokens; ++t) pos.push_back(static_cast<int32_t>(t * 13));
  std::iota(slots.begin(), slots.end(), 0);
  std::shuffle(slots.begin(), slots.end(), std::mt19937(73));
  slots.resize(tokens);
  Tensor k_ref = Tensor::host(DType::kF8_E4M3, {num_blocks, block_size, nkv, hd});
  Tensor v_ref = Tensor::host(DType::kF8_E4M3, k_ref.shape());
  for (int64_t i = 0; i < k_ref.numel(); ++i) k_ref.data_as<uint8_t>()[i] = v_ref.data_as<uint8_t>()[i] = (i * 37) % 0x7e;
  Tensor k_gpu = gpu_copy(k_ref), v_gpu = gpu_copy(v_ref);
  Tensor q_ref = Tensor::host(DType::kF32, {tokens, nh, hd}), q_gpu = poisoned(DType::kBF16, {tokens, nh, hd});
  const ops::PrepareQkvParams params{.rotary_dim = hd, .norm_eps = 1e-6f};
  ops::prepare_qkv({.qkv = qkv, .q_norm = qw, .k_norm = kw, .positions = int_tensor(pos), .inv_freq = inv,
                    .slot_mapping = int_tensor(slots), .k_cache = k_ref, .v_cache = v_ref, .q_out = q_ref},
                   params);
  ops::prepare_qkv({.qkv = gpu_bf16(qkv), .q_norm = gpu_bf16(qw), .k_norm = gpu_bf16(kw),
                    .positions = gpu_copy(int_tensor(pos)), .inv_freq = gpu_copy(inv),
                    .slot_mapping = gpu_copy(int_tensor(slots)), .k_cache = k_gpu, .v_cache = v_gpu, .q_out = q_gpu},
                   params);
  expect_close(*gpu_, q_gpu, q_ref, kBf16Tolerance, "prepare_qkv e4m3 q");
  // An element whose f32 value sits near a rounding midpoint may land one e4m3 step apart.
  EXPECT_LT(compare(e4m3_as_f32(*gpu_, k_gpu), e4m3_as_f32(*gpu_, k_ref)).rel_l2, 1e-2) << "k cache";
  const Tensor v_codes = gpu_->to_host(v_gpu);  // v is copied, not computed: the same codes
  EXPECT_EQ(std::memcmp(v_codes.data(), v_ref.data(), v_ref.nbytes()), 0) << "v cache";
}

TEST_F(CudaFusedOps, GatedActivationHalvesMatchesCpu) {
  for (ops::Activation act : {ops::Activation::kSilu, ops::Activation::kGeluTanh}) {
    for (const Shape& shape : {Shape{1, 14336}, Shape{37, 768}, Shape{256, 512}}) {
      const Tensor gate_up = random_rounded({shape[0], 2 * shape[1]}, 60, -4.f, 4.f);
      Tensor ref = Tensor::host(DType::kF32, shape);
      ops::gated_activation_halves(gate_up, ref, act);
      Tensor out = poisoned(DType::kBF16, shape);
      ops::gated_activation_halves(gpu_bf16(gate_up), out, act);
      expect_close(*gpu_, out, ref, kBf16Tolerance, "gated_activation_halves");
    }
  }
}

}  // namespace
}  // namespace strata::test
