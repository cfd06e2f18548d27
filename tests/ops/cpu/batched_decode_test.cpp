// Batched decode (state_slots) of the recurrent ops on the CPU: one call over rows whose
// states are scattered slots of a slot-major array equals, bit for bit, the per-row calls on
// those slots; slots no row names are left as they were; a slot out of range is an Error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "strata/core/error.h"
#include "strata/ops/causal_conv1d.h"
#include "strata/ops/gated_delta_rule.h"
#include "strata/ops/ssd_scan.h"
#include "test_support.h"

namespace strata::test {
namespace {

Tensor copy_of(const Tensor& t) {
  Tensor out = Tensor::host(t.dtype(), t.shape());
  std::memcpy(out.data(), t.data(), t.nbytes());
  return out;
}

// num_rows distinct slots of [0, num_slots), in shuffled order.
Tensor scattered_slots(int64_t num_rows, int64_t num_slots, uint32_t seed) {
  std::vector<int32_t> all(num_slots);
  std::iota(all.begin(), all.end(), 0);
  std::shuffle(all.begin(), all.end(), std::mt19937(seed));
  Tensor slots = Tensor::host(DType::kI32, {num_rows});
  std::copy_n(all.begin(), num_rows, slots.data_as<int32_t>());
  return slots;
}

void expect_bits_equal(const Tensor& got, const Tensor& ref, const char* what) {
  ASSERT_EQ(got.nbytes(), ref.nbytes()) << what;
  EXPECT_EQ(std::memcmp(got.data(), ref.data(), ref.nbytes()), 0) << what;
}

// One slot of a slot-major pool [num_slots, ...] viewed as `shape`.
Tensor slot_view(const Tensor& pool, int32_t slot, Shape shape) {
  return pool.slice_rows(slot, slot + 1).reshape(shape);
}

TEST(BatchedDecode, CausalConv1dEqualsPerRowCalls) {
  for (const auto& [rows, channels, bias] : std::vector<std::tuple<int64_t, int64_t, bool>>{
           {1, 8192, false}, {5, 8192, false}, {7, 10240, true}}) {
    const int64_t kernel = 4, num_slots = rows + 4;
    const Tensor x = random_f32({rows, channels}, 10, -2.f, 2.f), w = random_f32({channels, kernel}, 11);
    const Tensor b = bias ? random_f32({channels}, 12) : Tensor();
    const Tensor pool0 = random_f32({num_slots, channels, kernel - 1}, 13);
    const Tensor slots = scattered_slots(rows, num_slots, 14);
    Tensor pool = copy_of(pool0), out = copy_of(x);  // in place, as the layers run it
    ops::causal_conv1d({.x = out, .weight = w, .bias = b, .conv_state = pool, .out = out, .state_slots = slots});
    Tensor ref_pool = copy_of(pool0), ref = Tensor::host(DType::kF32, {rows, channels});
    for (int64_t r = 0; r < rows; ++r)
      ops::causal_conv1d({.x = x.slice_rows(r, r + 1), .weight = w, .bias = b,
                          .conv_state = slot_view(ref_pool, slots.data_as<int32_t>()[r], {channels, kernel - 1}),
                          .out = ref.slice_rows(r, r + 1)});
    expect_bits_equal(out, ref, "conv out");
    expect_bits_equal(pool, ref_pool, "conv states");
  }
}

TEST(BatchedDecode, GatedDeltaRuleEqualsPerRowCalls) {
  struct Case { int64_t rows, nv, nk, dk, dv; };
  for (const Case& c : std::vector<Case>{{1, 32, 16, 128, 128}, {4, 32, 16, 128, 128}, {6, 4, 2, 32, 64}}) {
    const int64_t width = 2 * c.nk * c.dk + c.nv * c.dv, num_slots = c.rows + 3;
    const Tensor qkv = random_f32({c.rows, width}, 20), a = random_f32({c.rows, c.nv}, 21, -2.f, 2.f);
    const Tensor b = random_f32({c.rows, c.nv}, 22, -2.f, 2.f);
    const Tensor a_log = random_f32({c.nv}, 23, -1.f, 0.5f), dt_bias = random_f32({c.nv}, 24);
    const Tensor pool0 = random_f32({num_slots, c.nv, c.dk, c.dv}, 25, -0.5f, 0.5f);
    const Tensor slots = scattered_slots(c.rows, num_slots, 26);
    Tensor pool = copy_of(pool0), out = Tensor::host(DType::kF32, {c.rows, c.nv, c.dv});
    ops::gated_delta_rule({.qkv = qkv, .a = a, .b = b, .A_log = a_log, .dt_bias = dt_bias, .state = pool,
                           .out = out, .state_slots = slots});
    Tensor ref_pool = copy_of(pool0), ref = Tensor::host(DType::kF32, {c.rows, c.nv, c.dv});
    for (int64_t r = 0; r < c.rows; ++r)
      ops::gated_delta_rule({.qkv = qkv.slice_rows(r, r + 1), .a = a.slice_rows(r, r + 1),
                             .b = b.slice_rows(r, r + 1), .A_log = a_log, .dt_bias = dt_bias,
                             .state = slot_view(ref_pool, slots.data_as<int32_t>()[r], {c.nv, c.dk, c.dv}),
                             .out = ref.slice_rows(r, r + 1)});
    expect_bits_equal(out, ref, "gdn out");
    expect_bits_equal(pool, ref_pool, "gdn states");
  }
}

TEST(BatchedDecode, SsdScanEqualsPerRowCalls) {
  struct Case { int64_t rows, nh, hd, n, groups; };
  for (const Case& c : std::vector<Case>{{1, 128, 64, 128, 8}, {5, 80, 64, 128, 1}, {3, 8, 32, 16, 2}}) {
    const int64_t width = c.nh * c.hd + 2 * c.groups * c.n, num_slots = c.rows + 2;
    const Tensor xbc = random_f32({c.rows, width}, 30), dt = random_f32({c.rows, c.nh}, 31, -3.f, 1.f);
    const Tensor dt_bias = random_f32({c.nh}, 32), a_log = random_f32({c.nh}, 33), d = random_f32({c.nh}, 34);
    const Tensor pool0 = random_f32({num_slots, c.nh, c.hd, c.n}, 35, -0.5f, 0.5f);
    const Tensor slots = scattered_slots(c.rows, num_slots, 36);
    const ops::SsdScanOptions options{.n_groups = c.groups, .dt_min = 0.001f, .dt_max = 5.0f};
    Tensor pool = copy_of(pool0), y = Tensor::host(DType::kF32, {c.rows, c.nh, c.hd});
    ops::ssd_scan({.xbc = xbc, .dt = dt, .dt_bias = dt_bias, .A_log = a_log, .D = d, .state = pool, .y = y,
                   .state_slots = slots}, options);
    Tensor ref_pool = copy_of(pool0), ref = Tensor::host(DType::kF32, {c.rows, c.nh, c.hd});
    for (int64_t r = 0; r < c.rows; ++r)
      ops::ssd_scan({.xbc = xbc.slice_rows(r, r + 1), .dt = dt.slice_rows(r, r + 1), .dt_bias = dt_bias,
                     .A_log = a_log, .D = d,
                     .state = slot_view(ref_pool, slots.data_as<int32_t>()[r], {c.nh, c.hd, c.n}),
                     .y = ref.slice_rows(r, r + 1)}, options);
    expect_bits_equal(y, ref, "ssd y");
    expect_bits_equal(pool, ref_pool, "ssd states");
  }
}

TEST(BatchedDecode, SlotOutOfRangeIsAnError) {
  const int64_t channels = 64, kernel = 4, num_slots = 3;
  const Tensor x = random_f32({2, channels}, 40), w = random_f32({channels, kernel}, 41);
  Tensor pool = random_f32({num_slots, channels, kernel - 1}, 42), out = Tensor::host(DType::kF32, {2, channels});
  Tensor slots = Tensor::host(DType::kI32, {2});
  slots.data_as<int32_t>()[0] = 1;
  slots.data_as<int32_t>()[1] = num_slots;
  EXPECT_THROW(ops::causal_conv1d({.x = x, .weight = w, .conv_state = pool, .out = out, .state_slots = slots}), Error);
  slots.data_as<int32_t>()[1] = -1;
  EXPECT_THROW(ops::causal_conv1d({.x = x, .weight = w, .conv_state = pool, .out = out, .state_slots = slots}), Error);
  const Tensor qkv = random_f32({2, 4 * 8 + 2 * 8}, 43), ab = random_f32({2, 2}, 44);
  Tensor states = random_f32({num_slots, 2, 8, 8}, 45), gdn_out = Tensor::host(DType::kF32, {2, 2, 8});
  EXPECT_THROW(ops::gated_delta_rule({.qkv = qkv, .a = ab, .b = ab, .A_log = random_f32({2}, 46),
                                      .dt_bias = random_f32({2}, 47), .state = states, .out = gdn_out,
                                      .state_slots = slots}), Error);
  const Tensor xbc = random_f32({2, 2 * 8 + 2 * 16}, 48);
  Tensor ssd_states = random_f32({num_slots, 2, 8, 16}, 49), y = Tensor::host(DType::kF32, {2, 2, 8});
  EXPECT_THROW(ops::ssd_scan({.xbc = xbc, .dt = ab, .dt_bias = random_f32({2}, 50), .A_log = random_f32({2}, 51),
                              .state = ssd_states, .y = y, .state_slots = slots}, {}), Error);
}

}  // namespace
}  // namespace strata::test
