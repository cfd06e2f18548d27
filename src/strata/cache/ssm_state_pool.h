// Fixed pool of per-sequence recurrent state slots for every SSM layer of a model. A slot holds
// each layer's h_state (f32, or f16 to halve memory) and conv_state (always f32). Slots are
// handed out lowest-id-first from a fresh pool and a freed slot is reused first (LIFO); prefix
// cache snapshots are ordinary slots, and snapshot/restore are copy_slot calls.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "strata/cache/ssm_layer_shape.h"
#include "strata/cache/verify_state_buffer.h"

namespace strata {

enum class SsmStateDType : uint8_t { kF32, kF16 };

class SsmStatePool {
 public:
  // Throws strata::Error when num_slots < 1 or a layer size is negative.
  SsmStatePool(std::vector<SsmLayerShape> layers, int num_slots,
               SsmStateDType h_state_dtype = SsmStateDType::kF32);

  // A free slot with all its state zeroed (a fresh sequence), or nullopt when none is free.
  std::optional<int32_t> allocate();
  // Freeing a slot that is not allocated is a broken invariant (STRATA_CHECK).
  void free(int32_t slot);
  bool is_allocated(int32_t slot) const;
  int num_free() const { return static_cast<int>(free_slots_.size()); }
  int capacity() const { return num_slots_; }
  int num_layers() const { return static_cast<int>(layers_.size()); }
  const SsmLayerShape& layer_shape(int layer) const;
  SsmStateDType h_state_dtype() const { return h_dtype_; }
  int64_t bytes() const;  // storage of all slots

  // Direct views of an allocated slot. h_state() needs f32 storage, h_state_f16() f16 storage.
  float* h_state(int layer, int32_t slot);          // [h_state_elems] f32
  uint16_t* h_state_f16(int layer, int32_t slot);   // [h_state_elems] f16 bits
  float* conv_state(int layer, int32_t slot);       // [conv_state_elems] f32
  // Slot-major arrays of a layer for kernels that index slots themselves.
  void* h_state_base(int layer);                    // [num_slots, h_state_elems] f32 or f16
  float* conv_state_base(int layer);                // [num_slots, conv_state_elems] f32

  // f32 copies in and out that work in both storage modes (f16 rounds to nearest even).
  void load_h_state(int layer, int32_t slot, float* dst) const;  // dst: [h_state_elems] f32
  void store_h_state(int layer, int32_t slot, const float* src);  // src: [h_state_elems] f32

  // Copies every layer's state of src into dst (both allocated), bit for bit.
  void copy_slot(int32_t src, int32_t dst);
  // The same for one layer (a layer snapshots its own state mid-step, before later layers ran).
  void copy_layer(int layer, int32_t src, int32_t dst);

  // Sets slot to the state after the first num_accepted tokens of the verify row held by
  // buffer: row num_accepted - 1. The row's first token is always kept, so
  // 1 <= num_accepted <= buffer.num_tokens(); buffer layers must match the pool's.
  void rollback(int32_t slot, const VerifyStateBuffer& buffer, int num_accepted);

 private:
  void check_slot(int32_t slot) const;
  void check_layer(int layer) const;
  void zero_slot(int32_t slot);

  std::vector<SsmLayerShape> layers_;
  int num_slots_;
  SsmStateDType h_dtype_;
  std::vector<std::vector<float>> h_f32_;     // per layer [num_slots, h_state_elems] f32
  std::vector<std::vector<uint16_t>> h_f16_;  // per layer [num_slots, h_state_elems] f16
  std::vector<std::vector<float>> conv_;      // per layer [num_slots, conv_state_elems] f32
  std::vector<int32_t> free_slots_;           // stack: back() is handed out next
  std::vector<uint8_t> allocated_;            // [num_slots]
};

}  // namespace strata
