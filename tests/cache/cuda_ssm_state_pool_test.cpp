// SsmStatePool and VerifyStateBuffer in device memory: a random run of allocate / free /
// store / copy_slot / copy_layer / rollback on a CUDA pool leaves every slot bit-identical to
// the same run on a host pool; allocate() zeroes on the device; f16 storage is refused.
// Skipped without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "strata/cache/ssm_state_pool.h"
#include "strata/core/error.h"

namespace strata {
namespace {

const std::vector<SsmLayerShape> kLayers = {{24, 9}, {0, 0}, {40, 3}, {4096, 0}};

std::vector<float> pattern(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void store(SsmStatePool& pool, int32_t slot, uint32_t seed) {
  for (int layer = 0; layer < pool.num_layers(); ++layer) {
    const SsmLayerShape& s = pool.layer_shape(layer);
    pool.store_h_state(layer, slot, pattern(s.h_state_elems, seed + 2 * layer).data());
    pool.store_conv_state(layer, slot, pattern(s.conv_state_elems, seed + 2 * layer + 1).data());
  }
}

// Every layer's h_state then conv_state of slot, as host floats.
std::vector<float> contents(const SsmStatePool& pool, int32_t slot) {
  std::vector<float> all;
  for (int layer = 0; layer < pool.num_layers(); ++layer) {
    const SsmLayerShape& s = pool.layer_shape(layer);
    std::vector<float> h(s.h_state_elems), c(s.conv_state_elems);
    pool.load_h_state(layer, slot, h.data());
    pool.load_conv_state(layer, slot, c.data());
    all.insert(all.end(), h.begin(), h.end());
    all.insert(all.end(), c.begin(), c.end());
  }
  return all;
}

// Fills row r of every layer of a verify buffer with pattern(seed + r), through the backend.
void fill_verify(Backend& backend, VerifyStateBuffer& buffer, int rows, uint32_t seed) {
  for (int layer = 0; layer < buffer.num_layers(); ++layer) {
    const SsmLayerShape& s = buffer.layer_shape(layer);
    for (int r = 0; r < rows; ++r) {
      std::vector<float> h = pattern(s.h_state_elems, seed + 100 * layer + r);
      std::vector<float> c = pattern(s.conv_state_elems, seed + 100 * layer + r + 50);
      backend.copy(buffer.h_state_rows(layer).slice_rows(r, r + 1), Tensor::view(h.data(), DType::kF32, {1, s.h_state_elems}));
      backend.copy(buffer.conv_state_rows(layer).slice_rows(r, r + 1),
                   Tensor::view(c.data(), DType::kF32, {1, s.conv_state_elems}));
    }
  }
  buffer.set_num_tokens(rows);
}

TEST(CudaSsmStatePool, RandomRunMatchesHostPoolBitForBit) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible";
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  constexpr int kSlots = 6;
  SsmStatePool host(kLayers, kSlots), device(kLayers, kSlots, SsmStateDType::kF32, gpu.get());
  EXPECT_EQ(device.device().type, DeviceType::kCuda);
  EXPECT_EQ(device.h_states(0).device().type, DeviceType::kCuda);
  EXPECT_EQ(device.bytes(), host.bytes());
  VerifyStateBuffer host_buffer(kLayers, 5), device_buffer(kLayers, 5, gpu.get());
  std::mt19937 rng(7);
  std::vector<int32_t> live;
  for (int op = 0; op < 400; ++op) {
    const int kind = static_cast<int>(rng() % 6);
    if (kind == 0 || live.empty()) {
      const std::optional<int32_t> a = host.allocate(), b = device.allocate();
      ASSERT_EQ(a, b);
      if (a) live.push_back(*a);
    } else if (kind == 1) {
      const size_t i = rng() % live.size();
      host.free(live[i]);
      device.free(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (kind == 2) {
      const int32_t slot = live[rng() % live.size()];
      store(host, slot, static_cast<uint32_t>(op));
      store(device, slot, static_cast<uint32_t>(op));
    } else if (kind == 3) {
      const int32_t src = live[rng() % live.size()], dst = live[rng() % live.size()];
      host.copy_slot(src, dst);
      device.copy_slot(src, dst);
    } else if (kind == 4) {
      const int layer = static_cast<int>(rng() % kLayers.size());
      const int32_t src = live[rng() % live.size()], dst = live[rng() % live.size()];
      host.copy_layer(layer, src, dst);
      device.copy_layer(layer, src, dst);
    } else {
      const int rows = 1 + static_cast<int>(rng() % 5), accepted = 1 + static_cast<int>(rng() % rows);
      fill_verify(*cpu, host_buffer, rows, static_cast<uint32_t>(op));
      fill_verify(*gpu, device_buffer, rows, static_cast<uint32_t>(op));
      const int32_t slot = live[rng() % live.size()];
      host.rollback(slot, host_buffer, accepted);
      device.rollback(slot, device_buffer, accepted);
    }
    for (int32_t slot : live) ASSERT_EQ(contents(device, slot), contents(host, slot)) << "op " << op;
  }
}

TEST(CudaSsmStatePool, AllocateZeroesAReusedSlotOnTheDevice) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible";
  SsmStatePool pool(kLayers, 2, SsmStateDType::kF32, gpu.get());
  const int32_t slot = *pool.allocate();
  store(pool, slot, 3);
  EXPECT_NE(contents(pool, slot), std::vector<float>(contents(pool, slot).size(), 0.f));
  pool.free(slot);
  ASSERT_EQ(pool.allocate(), slot);
  EXPECT_EQ(contents(pool, slot), std::vector<float>(contents(pool, slot).size(), 0.f));
}

TEST(CudaSsmStatePool, F16StorageIsRefusedOnTheDevice) {
  std::unique_ptr<Backend> gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible";
  EXPECT_THROW(SsmStatePool(kLayers, 2, SsmStateDType::kF16, gpu.get()), Error);
}

}  // namespace
}  // namespace strata
