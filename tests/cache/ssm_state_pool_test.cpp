// SsmStatePool: exact slot ids, exhaustion, zeroing, double-free checks, f16 storage, copies,
// verify rollback, and a long random churn against a shadow model.
#include "strata/cache/ssm_state_pool.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/error.h"

namespace strata {
namespace {

const std::vector<SsmLayerShape> kLayers = {{24, 9}, {0, 0}, {40, 3}};

// Fills every layer of slot with values derived from tag, so contents identify their origin.
void fill(SsmStatePool& pool, int32_t slot, int tag) {
  for (int layer = 0; layer < pool.num_layers(); ++layer) {
    const SsmLayerShape& s = pool.layer_shape(layer);
    std::vector<float> h(s.h_state_elems);
    for (int64_t i = 0; i < s.h_state_elems; ++i) h[i] = float(tag) + float(i);
    pool.store_h_state(layer, slot, h.data());
    float* conv = pool.conv_state(layer, slot);
    for (int64_t i = 0; i < s.conv_state_elems; ++i) conv[i] = -float(tag) - float(i);
  }
}

// True when slot holds fill(tag), or zeros for tag 0 (integers below 2048 are exact in f16).
bool holds(SsmStatePool& pool, int32_t slot, int tag) {
  for (int layer = 0; layer < pool.num_layers(); ++layer) {
    const SsmLayerShape& s = pool.layer_shape(layer);
    std::vector<float> h(s.h_state_elems);
    pool.load_h_state(layer, slot, h.data());
    for (int64_t i = 0; i < s.h_state_elems; ++i)
      if (h[i] != (tag == 0 ? 0.f : float(tag) + float(i))) return false;
    const float* conv = pool.conv_state(layer, slot);
    for (int64_t i = 0; i < s.conv_state_elems; ++i)
      if (conv[i] != (tag == 0 ? 0.f : -float(tag) - float(i))) return false;
  }
  return true;
}

TEST(SsmStatePool, HandsOutLowestIdsFirstAndReusesLastFreed) {
  SsmStatePool pool(kLayers, 4);
  EXPECT_EQ(pool.capacity(), 4);
  EXPECT_EQ(pool.num_free(), 4);
  for (int32_t want = 0; want < 4; ++want) EXPECT_EQ(pool.allocate(), want);
  EXPECT_EQ(pool.num_free(), 0);
  EXPECT_EQ(pool.allocate(), std::nullopt);
  pool.free(2);
  pool.free(0);
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_EQ(pool.allocate(), 0);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), std::nullopt);
}

TEST(SsmStatePool, ScratchSlotLeavesCirculationZeroed) {
  SsmStatePool pool(kLayers, 3);
  const int32_t first = *pool.allocate();
  fill(pool, first, 4);
  pool.free(first);
  const std::optional<int32_t> scratch = pool.reserve_scratch_slot();
  EXPECT_EQ(scratch, first);  // the slot allocate() would have handed out
  EXPECT_EQ(pool.capacity(), 2);
  EXPECT_EQ(pool.num_free(), 2);
  EXPECT_FALSE(pool.is_allocated(*scratch));
  for (int layer = 0; layer < pool.num_layers(); ++layer) {
    const SsmLayerShape& s = pool.layer_shape(layer);
    const float* h = pool.h_states(layer).data_as<float>() + *scratch * s.h_state_elems;
    const float* conv = pool.conv_states(layer).data_as<float>() + *scratch * s.conv_state_elems;
    for (int64_t i = 0; i < s.h_state_elems; ++i) ASSERT_EQ(h[i], 0.f) << layer;
    for (int64_t i = 0; i < s.conv_state_elems; ++i) ASSERT_EQ(conv[i], 0.f) << layer;
  }
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), std::nullopt);
  EXPECT_EQ(pool.reserve_scratch_slot(), std::nullopt);
}

TEST(SsmStatePool, AllocateZeroesReusedSlot) {
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    SsmStatePool pool(kLayers, 2, dtype);
    const int32_t slot = *pool.allocate();
    fill(pool, slot, 5);
    EXPECT_TRUE(holds(pool, slot, 5));
    pool.free(slot);
    EXPECT_EQ(pool.allocate(), slot);
    EXPECT_TRUE(holds(pool, slot, 0));
  }
}

// What a tensor-parallel rank 0 sends: every allocation, free and copy, in order; a second pool
// that repeats them (take, free, copy_slot) ends with the same slots in use.
TEST(SsmStatePool, ListenerHearsWhatAnotherPoolRepeats) {
  SsmStatePool first(kLayers, 4), second(kLayers, 4);
  std::vector<std::string> heard;
  first.set_listener({.allocated = [&](int32_t s) { heard.push_back("take " + std::to_string(s)); second.take(s); },
                      .freed = [&](int32_t s) { heard.push_back("free " + std::to_string(s)); second.free(s); },
                      .copied = [&](int32_t src, int32_t dst) {
                        heard.push_back("copy " + std::to_string(src) + " " + std::to_string(dst));
                        second.copy_slot(src, dst);
                      }});
  const int32_t a = *first.allocate(), b = *first.allocate();
  first.free(a);
  const int32_t c = *first.allocate();  // reuses a
  fill(second, b, 7);
  first.copy_slot(b, c);
  EXPECT_EQ(heard, (std::vector<std::string>{"take 0", "take 1", "free 0", "take 0", "copy 1 0"}));
  EXPECT_TRUE(holds(second, c, 7));
  EXPECT_TRUE(second.is_allocated(b) && second.is_allocated(c) && !second.is_allocated(2));
  EXPECT_EQ(second.num_free(), 2);
  EXPECT_DEATH_IF_SUPPORTED(second.take(b), "not free");
}

TEST(SsmStatePool, BytesCountStorageDtype) {
  EXPECT_EQ(SsmStatePool(kLayers, 3).bytes(), (24 * 4 + 9 * 4 + 40 * 4 + 3 * 4) * 3);
  EXPECT_EQ(SsmStatePool(kLayers, 3, SsmStateDType::kF16).bytes(), (24 * 2 + 9 * 4 + 40 * 2 + 3 * 4) * 3);
}

TEST(SsmStatePool, RejectsBadConfig) {
  EXPECT_THROW(SsmStatePool(kLayers, 0), Error);
  EXPECT_THROW(SsmStatePool({{-1, 2}}, 4), Error);
}

TEST(SsmStatePoolDeathTest, DoubleFreeAndUnallocatedFreeAbort) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SsmStatePool pool(kLayers, 3);
  const int32_t slot = *pool.allocate();
  pool.free(slot);
  EXPECT_DEATH(pool.free(slot), "not allocated");
  EXPECT_DEATH(pool.free(2), "not allocated");
  EXPECT_DEATH(pool.free(7), "slot 7 of 3");
  EXPECT_DEATH(pool.conv_state(0, 1), "not allocated");
}

TEST(SsmStatePool, F16RoundTripWithinHalfUlp) {
  // f16 keeps 11 significant bits: round to nearest gives |err| <= 2^-11 |x| for normal values.
  SsmStatePool pool({{1000, 0}}, 1, SsmStateDType::kF16);
  const int32_t slot = *pool.allocate();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-4.f, 4.f);
  std::vector<float> src(1000), back(1000);
  for (float& x : src) x = dist(rng);
  pool.store_h_state(0, slot, src.data());
  pool.load_h_state(0, slot, back.data());
  double worst = 0;
  for (int i = 0; i < 1000; ++i) {
    if (std::fabs(src[i]) < 6.1e-5f) continue;  // below f16's normal range
    worst = std::max(worst, std::fabs(double(back[i]) - src[i]) / std::fabs(src[i]));
  }
  EXPECT_LE(worst, std::ldexp(1.0, -11));
  EXPECT_GT(worst, 0.0);  // f16 storage is really in use
}

TEST(SsmStatePool, CopySlotIsBitExactInBothModes) {
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    SsmStatePool pool(kLayers, 3, dtype);
    const int32_t a = *pool.allocate(), b = *pool.allocate();
    fill(pool, a, 9);
    pool.copy_slot(a, b);
    EXPECT_TRUE(holds(pool, b, 9));
    fill(pool, a, 4);  // the copy is independent of its source
    EXPECT_TRUE(holds(pool, b, 9));
  }
}

TEST(SsmStatePool, RollbackWritesStateAfterAcceptedTokens) {
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    SsmStatePool pool(kLayers, 2, dtype);
    VerifyStateBuffer buffer(kLayers, 6);
    for (int layer = 0; layer < 3; ++layer) {
      const SsmLayerShape& s = kLayers[layer];
      for (int64_t r = 0; r < 6; ++r) {  // row r == fill(tag r + 1)
        for (int64_t i = 0; i < s.h_state_elems; ++i)
          buffer.h_states(layer)[r * s.h_state_elems + i] = float(r + 1) + float(i);
        for (int64_t i = 0; i < s.conv_state_elems; ++i)
          buffer.conv_states(layer)[r * s.conv_state_elems + i] = -float(r + 1) - float(i);
      }
    }
    buffer.set_num_tokens(5);
    const int32_t slot = *pool.allocate();
    for (int accepted : {3, 1, 5}) {
      pool.rollback(slot, buffer, accepted);
      EXPECT_TRUE(holds(pool, slot, accepted));
    }
  }
}

// A pool given the CPU backend keeps host memory: the same pointers, copies and rollback as
// the plain pool, and conv_state loads and stores through the host-copy calls.
TEST(SsmStatePool, CpuBackendStorageIsHostMemory) {
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    SsmStatePool pool(kLayers, 3, dtype, cpu.get());
    EXPECT_TRUE(pool.device().is_cpu());
    const int32_t a = *pool.allocate(), b = *pool.allocate();
    fill(pool, a, 6);
    const std::vector<float> conv = {1.5f, -2.f, 3.f};
    pool.store_conv_state(2, a, conv.data());
    std::vector<float> back(3);
    pool.load_conv_state(2, a, back.data());
    EXPECT_EQ(back, conv);
    EXPECT_EQ(pool.conv_state(2, a)[1], -2.f);
    pool.copy_slot(a, b);
    pool.load_conv_state(2, b, back.data());
    EXPECT_EQ(back, conv);
    const std::vector<float> tagged = {-6.f, -7.f, -8.f};  // layer 2's conv_state of fill(6)
    pool.store_conv_state(2, b, tagged.data());
    EXPECT_TRUE(holds(pool, b, 6));
    pool.copy_layer(2, a, b);
    EXPECT_FALSE(holds(pool, b, 6));
    pool.load_conv_state(2, b, back.data());
    EXPECT_EQ(back, conv);
    VerifyStateBuffer buffer(kLayers, 2, cpu.get());
    EXPECT_TRUE(buffer.device().is_cpu());
    buffer.set_num_tokens(2);
    pool.rollback(b, buffer, 2);  // a fresh buffer holds zeros
    EXPECT_TRUE(holds(pool, b, 0));
  }
}

TEST(SsmStatePoolDeathTest, RollbackBeyondRowAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  SsmStatePool pool(kLayers, 1);
  VerifyStateBuffer buffer(kLayers, 4);
  buffer.set_num_tokens(2);
  const int32_t slot = *pool.allocate();
  EXPECT_DEATH(pool.rollback(slot, buffer, 3), "rollback to 3");
  EXPECT_DEATH(pool.rollback(slot, buffer, 0), "rollback to 0");
}

// A random mix of allocate / free / copy / rewrite against a shadow model of which slots are
// live and what each holds.
TEST(SsmStatePool, RandomChurnMatchesShadowModel) {
  for (SsmStateDType dtype : {SsmStateDType::kF32, SsmStateDType::kF16}) {
    const int capacity = 12;
    SsmStatePool pool(kLayers, capacity, dtype);
    std::map<int32_t, int> live;  // slot -> tag it holds
    std::mt19937 rng(1234);
    int next_tag = 1;
    for (int step = 0; step < 4000; ++step) {
      const int op = int(rng() % 4);
      if (op == 0) {
        const std::optional<int32_t> slot = pool.allocate();
        ASSERT_EQ(slot.has_value(), int(live.size()) < capacity);
        if (slot) {
          ASSERT_FALSE(live.count(*slot)) << "slot " << *slot << " handed out twice";
          ASSERT_TRUE(holds(pool, *slot, 0));
          live[*slot] = 0;
        }
      } else if (op == 1 && !live.empty()) {
        auto it = std::next(live.begin(), rng() % live.size());
        pool.free(it->first);
        live.erase(it);
      } else if (op == 2 && live.size() >= 2) {
        const auto src = std::next(live.begin(), rng() % live.size());
        const auto dst = std::next(live.begin(), rng() % live.size());
        pool.copy_slot(src->first, dst->first);
        dst->second = src->second;
      } else if (op == 3 && !live.empty()) {
        auto it = std::next(live.begin(), rng() % live.size());
        it->second = next_tag = next_tag % 1000 + 1;
        fill(pool, it->first, it->second);
      }
      ASSERT_EQ(pool.num_free(), capacity - int(live.size()));
      for (int32_t s = 0; s < capacity; ++s) ASSERT_EQ(pool.is_allocated(s), live.count(s) == 1);
      if (step % 50 == 0) {
        for (const auto& [slot, tag] : live) ASSERT_TRUE(holds(pool, slot, tag)) << "slot " << slot;
      }
    }
  }
}

}  // namespace
}  // namespace strata
