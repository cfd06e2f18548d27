// SsmStatePool: per-layer slot-major arrays, a LIFO free stack and an allocated flag per slot.
// f16 storage converts with F16C (round to nearest even), the x86-64-v3 baseline.
#include "strata/cache/ssm_state_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "strata/core/error.h"

namespace strata {
namespace {

void f32_to_f16_n(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = _cvtss_sh(src[i], _MM_FROUND_TO_NEAREST_INT);
}

void f16_to_f32_n(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = _cvtsh_ss(src[i]);
}

}  // namespace

SsmStatePool::SsmStatePool(std::vector<SsmLayerShape> layers, int num_slots,
                           SsmStateDType h_state_dtype)
    : layers_(std::move(layers)), num_slots_(num_slots), h_dtype_(h_state_dtype) {
  if (num_slots < 1) fail("SsmStatePool: num_slots is {}; it must be >= 1", num_slots);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const SsmLayerShape& s = layers_[i];
    if (s.h_state_elems < 0 || s.conv_state_elems < 0) {
      fail("SsmStatePool: layer {} has h_state_elems {} and conv_state_elems {}; sizes must be "
           ">= 0", i, s.h_state_elems, s.conv_state_elems);
    }
    if (h_dtype_ == SsmStateDType::kF32) {
      h_f32_.emplace_back(s.h_state_elems * num_slots, 0.f);
    } else {
      h_f16_.emplace_back(s.h_state_elems * num_slots, uint16_t{0});
    }
    conv_.emplace_back(s.conv_state_elems * num_slots, 0.f);
  }
  for (int32_t slot = num_slots - 1; slot >= 0; --slot) free_slots_.push_back(slot);
  allocated_.assign(num_slots, 0);
}

std::optional<int32_t> SsmStatePool::allocate() {
  if (free_slots_.empty()) return std::nullopt;
  const int32_t slot = free_slots_.back();
  free_slots_.pop_back();
  allocated_[slot] = 1;
  zero_slot(slot);
  return slot;
}

void SsmStatePool::free(int32_t slot) {
  STRATA_CHECK_MSG(slot >= 0 && slot < num_slots_, "slot {} of {}", slot, num_slots_);
  STRATA_CHECK_MSG(allocated_[slot], "freeing SSM slot {} which is not allocated", slot);
  allocated_[slot] = 0;
  free_slots_.push_back(slot);
}

bool SsmStatePool::is_allocated(int32_t slot) const {
  return slot >= 0 && slot < num_slots_ && allocated_[slot] != 0;
}

const SsmLayerShape& SsmStatePool::layer_shape(int layer) const {
  check_layer(layer);
  return layers_[layer];
}

int64_t SsmStatePool::bytes() const {
  int64_t total = 0;
  const int64_t h_bytes = h_dtype_ == SsmStateDType::kF32 ? 4 : 2;
  for (const SsmLayerShape& s : layers_) {
    total += (s.h_state_elems * h_bytes + s.conv_state_elems * 4) * num_slots_;
  }
  return total;
}

float* SsmStatePool::h_state(int layer, int32_t slot) {
  check_layer(layer);
  check_slot(slot);
  STRATA_CHECK_MSG(h_dtype_ == SsmStateDType::kF32, "h_state() on an f16 pool; use load/store");
  return h_f32_[layer].data() + slot * layers_[layer].h_state_elems;
}

uint16_t* SsmStatePool::h_state_f16(int layer, int32_t slot) {
  check_layer(layer);
  check_slot(slot);
  STRATA_CHECK_MSG(h_dtype_ == SsmStateDType::kF16, "h_state_f16() on an f32 pool");
  return h_f16_[layer].data() + slot * layers_[layer].h_state_elems;
}

float* SsmStatePool::conv_state(int layer, int32_t slot) {
  check_layer(layer);
  check_slot(slot);
  return conv_[layer].data() + slot * layers_[layer].conv_state_elems;
}

void* SsmStatePool::h_state_base(int layer) {
  check_layer(layer);
  if (h_dtype_ == SsmStateDType::kF32) return h_f32_[layer].data();
  return h_f16_[layer].data();
}

float* SsmStatePool::conv_state_base(int layer) {
  check_layer(layer);
  return conv_[layer].data();
}

void SsmStatePool::load_h_state(int layer, int32_t slot, float* dst) const {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].h_state_elems;
  if (h_dtype_ == SsmStateDType::kF32) {
    std::memcpy(dst, h_f32_[layer].data() + slot * n, sizeof(float) * n);
  } else {
    f16_to_f32_n(h_f16_[layer].data() + slot * n, dst, n);
  }
}

void SsmStatePool::store_h_state(int layer, int32_t slot, const float* src) {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].h_state_elems;
  if (h_dtype_ == SsmStateDType::kF32) {
    std::memcpy(h_f32_[layer].data() + slot * n, src, sizeof(float) * n);
  } else {
    f32_to_f16_n(src, h_f16_[layer].data() + slot * n, n);
  }
}

void SsmStatePool::copy_slot(int32_t src, int32_t dst) {
  check_slot(src);
  check_slot(dst);
  for (int layer = 0; layer < num_layers(); ++layer) copy_layer(layer, src, dst);
}

void SsmStatePool::copy_layer(int layer, int32_t src, int32_t dst) {
  check_layer(layer);
  check_slot(src);
  check_slot(dst);
  if (src == dst) return;
  const int64_t h = layers_[layer].h_state_elems, c = layers_[layer].conv_state_elems;
  if (h_dtype_ == SsmStateDType::kF32) {
    std::copy_n(h_f32_[layer].data() + src * h, h, h_f32_[layer].data() + dst * h);
  } else {
    std::copy_n(h_f16_[layer].data() + src * h, h, h_f16_[layer].data() + dst * h);
  }
  std::copy_n(conv_[layer].data() + src * c, c, conv_[layer].data() + dst * c);
}

void SsmStatePool::rollback(int32_t slot, const VerifyStateBuffer& buffer, int num_accepted) {
  check_slot(slot);
  STRATA_CHECK_MSG(num_accepted >= 1 && num_accepted <= buffer.num_tokens(),
                   "rollback to {} accepted tokens of a {}-token verify row", num_accepted,
                   buffer.num_tokens());
  STRATA_CHECK(buffer.num_layers() == num_layers());
  const int64_t row = num_accepted - 1;
  for (int layer = 0; layer < num_layers(); ++layer) {
    const SsmLayerShape& s = layers_[layer];
    STRATA_CHECK(buffer.layer_shape(layer).h_state_elems == s.h_state_elems &&
                 buffer.layer_shape(layer).conv_state_elems == s.conv_state_elems);
    store_h_state(layer, slot, buffer.h_states(layer) + row * s.h_state_elems);
    std::copy_n(buffer.conv_states(layer) + row * s.conv_state_elems, s.conv_state_elems,
                conv_[layer].data() + slot * s.conv_state_elems);
  }
}

void SsmStatePool::check_slot(int32_t slot) const {
  STRATA_CHECK_MSG(slot >= 0 && slot < num_slots_, "SSM slot {} of {}", slot, num_slots_);
  STRATA_CHECK_MSG(allocated_[slot], "SSM slot {} is not allocated", slot);
}

void SsmStatePool::check_layer(int layer) const {
  STRATA_CHECK_MSG(layer >= 0 && layer < num_layers(), "SSM layer {} of {}", layer, num_layers());
}

void SsmStatePool::zero_slot(int32_t slot) {
  for (int layer = 0; layer < num_layers(); ++layer) {
    const int64_t h = layers_[layer].h_state_elems, c = layers_[layer].conv_state_elems;
    if (h_dtype_ == SsmStateDType::kF32) {
      std::fill_n(h_f32_[layer].data() + slot * h, h, 0.f);
    } else {
      std::fill_n(h_f16_[layer].data() + slot * h, h, uint16_t{0});
    }
    std::fill_n(conv_[layer].data() + slot * c, c, 0.f);
  }
}

}  // namespace strata
