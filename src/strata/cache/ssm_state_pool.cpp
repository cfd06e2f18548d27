// SsmStatePool: per-layer slot-major arrays (host or device, state_memory.h), a LIFO free stack
// and an allocated flag per slot. f16 storage (host only) converts with F16C (round to nearest
// even), the x86-64-v3 baseline.
#include "strata/cache/ssm_state_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <utility>

#include "strata/cache/state_memory.h"
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
                           SsmStateDType h_state_dtype, Backend* backend)
    : layers_(std::move(layers)), num_slots_(num_slots), h_dtype_(h_state_dtype), backend_(backend),
      device_(backend != nullptr ? backend->device() : Device{}) {
  if (num_slots < 1) fail("SsmStatePool: num_slots is {}; it must be >= 1", num_slots);
  if (h_dtype_ == SsmStateDType::kF16 && !device_.is_cpu())
    fail("SsmStatePool: f16 h_state storage (--ssm-state-dtype f16) is CPU-only; on {} use f32",
         backend->name());
  const DType h_dtype = h_dtype_ == SsmStateDType::kF32 ? DType::kF32 : DType::kF16;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const SsmLayerShape& s = layers_[i];
    if (s.h_state_elems < 0 || s.conv_state_elems < 0) {
      fail("SsmStatePool: layer {} has h_state_elems {} and conv_state_elems {}; sizes must be "
           ">= 0", i, s.h_state_elems, s.conv_state_elems);
    }
    h_.push_back(alloc_state(backend_, h_dtype, {num_slots, s.h_state_elems}));
    conv_.push_back(alloc_state(backend_, DType::kF32, {num_slots, s.conv_state_elems}));
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
  if (listener_.allocated) listener_.allocated(slot);
  return slot;
}

void SsmStatePool::take(int32_t slot) {
  const auto it = std::find(free_slots_.begin(), free_slots_.end(), slot);
  STRATA_CHECK_MSG(it != free_slots_.end(), "SSM slot {} is not free here", slot);
  free_slots_.erase(it);
  allocated_[slot] = 1;
  zero_slot(slot);
}

std::optional<int32_t> SsmStatePool::reserve_scratch_slot() {
  if (free_slots_.empty()) return std::nullopt;
  const int32_t slot = free_slots_.back();
  free_slots_.pop_back();
  zero_slot(slot);
  ++num_scratch_;
  return slot;
}

void SsmStatePool::free(int32_t slot) {
  STRATA_CHECK_MSG(slot >= 0 && slot < num_slots_, "slot {} of {}", slot, num_slots_);
  STRATA_CHECK_MSG(allocated_[slot], "freeing SSM slot {} which is not allocated", slot);
  allocated_[slot] = 0;
  free_slots_.push_back(slot);
  if (listener_.freed) listener_.freed(slot);
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
  return slot_row(h_[layer], slot).data_as<float>();
}

uint16_t* SsmStatePool::h_state_f16(int layer, int32_t slot) {
  check_layer(layer);
  check_slot(slot);
  STRATA_CHECK_MSG(h_dtype_ == SsmStateDType::kF16, "h_state_f16() on an f32 pool");
  return slot_row(h_[layer], slot).data_as<uint16_t>();
}

float* SsmStatePool::conv_state(int layer, int32_t slot) {
  check_layer(layer);
  check_slot(slot);
  return slot_row(conv_[layer], slot).data_as<float>();
}

const Tensor& SsmStatePool::h_states(int layer) const {
  check_layer(layer);
  return h_[layer];
}

const Tensor& SsmStatePool::conv_states(int layer) const {
  check_layer(layer);
  return conv_[layer];
}

std::vector<Tensor> SsmStatePool::slot_pools() const {
  std::vector<Tensor> pools;
  for (int layer = 0; layer < num_layers(); ++layer) {
    pools.push_back(h_[layer]);
    pools.push_back(conv_[layer]);
  }
  return pools;
}

void SsmStatePool::load_h_state(int layer, int32_t slot, float* dst) const {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].h_state_elems;
  if (h_dtype_ == SsmStateDType::kF32) {
    copy_state(backend_, Tensor::view(dst, DType::kF32, {1, n}), slot_row(h_[layer], slot));
  } else {
    f16_to_f32_n(slot_row(h_[layer], slot).data_as<uint16_t>(), dst, n);
  }
}

void SsmStatePool::store_h_state(int layer, int32_t slot, const float* src) {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].h_state_elems;
  if (h_dtype_ == SsmStateDType::kF32) {
    copy_state(backend_, slot_row(h_[layer], slot),
               Tensor::view(const_cast<float*>(src), DType::kF32, {1, n}));
  } else {
    f32_to_f16_n(src, slot_row(h_[layer], slot).data_as<uint16_t>(), n);
  }
}

void SsmStatePool::load_conv_state(int layer, int32_t slot, float* dst) const {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].conv_state_elems;
  copy_state(backend_, Tensor::view(dst, DType::kF32, {1, n}), slot_row(conv_[layer], slot));
}

void SsmStatePool::store_conv_state(int layer, int32_t slot, const float* src) {
  check_layer(layer);
  check_slot(slot);
  const int64_t n = layers_[layer].conv_state_elems;
  copy_state(backend_, slot_row(conv_[layer], slot),
             Tensor::view(const_cast<float*>(src), DType::kF32, {1, n}));
}

void SsmStatePool::copy_slot(int32_t src, int32_t dst) {
  check_slot(src);
  check_slot(dst);
  for (int layer = 0; layer < num_layers(); ++layer) copy_layer(layer, src, dst);
  if (listener_.copied) listener_.copied(src, dst);
}

void SsmStatePool::copy_layer(int layer, int32_t src, int32_t dst) {
  check_layer(layer);
  check_slot(src);
  check_slot(dst);
  if (src == dst) return;
  copy_state(backend_, slot_row(h_[layer], dst), slot_row(h_[layer], src));
  copy_state(backend_, slot_row(conv_[layer], dst), slot_row(conv_[layer], src));
}

// The buffer's rows are f32 in the pool's memory: a device pool copies on the device; an
// f16 pool (host only) narrows the row.
void SsmStatePool::rollback(int32_t slot, const VerifyStateBuffer& buffer, int num_accepted) {
  check_slot(slot);
  STRATA_CHECK_MSG(num_accepted >= 1 && num_accepted <= buffer.num_tokens(),
                   "rollback to {} accepted tokens of a {}-token verify row", num_accepted,
                   buffer.num_tokens());
  STRATA_CHECK(buffer.num_layers() == num_layers() && buffer.device() == device_);
  const int64_t row = num_accepted - 1;
  for (int layer = 0; layer < num_layers(); ++layer) {
    const SsmLayerShape& s = layers_[layer];
    STRATA_CHECK(buffer.layer_shape(layer).h_state_elems == s.h_state_elems &&
                 buffer.layer_shape(layer).conv_state_elems == s.conv_state_elems);
    if (h_dtype_ == SsmStateDType::kF32) {
      copy_state(backend_, slot_row(h_[layer], slot), buffer.h_state_rows(layer).slice_rows(row, row + 1));
    } else {
      store_h_state(layer, slot, buffer.h_states(layer) + row * s.h_state_elems);
    }
    copy_state(backend_, slot_row(conv_[layer], slot), buffer.conv_state_rows(layer).slice_rows(row, row + 1));
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
    zero_state(backend_, slot_row(h_[layer], slot));
    zero_state(backend_, slot_row(conv_[layer], slot));
  }
}

}  // namespace strata
