// Fixed pool of per-sequence recurrent state slots for every SSM layer of a model. A slot holds
// each layer's h_state (f32, or f16 to halve memory) and conv_state (always f32). Slots are
// handed out lowest-id-first from a fresh pool and a freed slot is reused first (LIFO); prefix
// cache snapshots are ordinary slots, and snapshot/restore are copy_slot calls. The storage is
// host memory, or device memory when the pool is given a GPU backend (f32 h_state only there).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/cache/ssm_layer_shape.h"
#include "strata/cache/verify_state_buffer.h"

namespace strata {

enum class SsmStateDType : uint8_t { kF32, kF16 };

// Told of every slot a pool hands out (zeroed), frees or copies over another: what rank 0 of a
// tensor-parallel group repeats on the other ranks' pools, which hold the same slots of their
// own heads' state.
struct SsmSlotListener {
  std::function<void(int32_t slot)> allocated;
  std::function<void(int32_t slot)> freed;
  std::function<void(int32_t src, int32_t dst)> copied;
};

class SsmStatePool {
 public:
  // backend: where the state lives (null: host memory); kept for the pool's lifetime.
  // Throws strata::Error when num_slots < 1, a layer size is negative, or f16 storage is
  // asked of a GPU backend.
  SsmStatePool(std::vector<SsmLayerShape> layers, int num_slots,
               SsmStateDType h_state_dtype = SsmStateDType::kF32, Backend* backend = nullptr);

  // A free slot with all its state zeroed (a fresh sequence), or nullopt when none is free.
  std::optional<int32_t> allocate();
  // Freeing a slot that is not allocated is a broken invariant (STRATA_CHECK).
  void free(int32_t slot);
  // Another rank's allocate() repeated here: `slot`, which must be free, zeroed.
  void take(int32_t slot);
  void set_listener(SsmSlotListener listener) { listener_ = std::move(listener); }
  bool is_allocated(int32_t slot) const;
  int num_free() const { return static_cast<int>(free_slots_.size()); }
  int capacity() const { return num_slots_ - num_scratch_; }  // slots sequences may allocate
  // Takes a free slot out of circulation for good (zeroed; capacity() shrinks by one): scratch
  // state that batched kernels may overwrite at will, as the padding rows of captured decode
  // graphs do. Nullopt when no slot is free.
  std::optional<int32_t> reserve_scratch_slot();
  int num_layers() const { return static_cast<int>(layers_.size()); }
  const SsmLayerShape& layer_shape(int layer) const;
  SsmStateDType h_state_dtype() const { return h_dtype_; }
  int64_t bytes() const;  // storage of all slots
  int64_t slot_bytes() const { return bytes() / num_slots_; }  // one slot, every layer
  Device device() const { return device_; }

  // Direct pointers into an allocated slot, in the pool's memory (device memory on a GPU).
  // h_state() needs f32 storage, h_state_f16() f16 storage.
  float* h_state(int layer, int32_t slot);          // [h_state_elems] f32
  uint16_t* h_state_f16(int layer, int32_t slot);   // [h_state_elems] f16 bits
  float* conv_state(int layer, int32_t slot);       // [conv_state_elems] f32
  // Slot-major arrays of a layer for kernels that index slots themselves.
  const Tensor& h_states(int layer) const;          // [num_slots, h_state_elems] f32 or f16
  const Tensor& conv_states(int layer) const;       // [num_slots, conv_state_elems] f32
  // Every layer's h_states then conv_states, in layer order: a slot is one row of each.
  std::vector<Tensor> slot_pools() const;

  // f32 copies between host memory and a slot, in both storage modes (f16 rounds to nearest
  // even) and on every device (a device pool waits for its copy out).
  void load_h_state(int layer, int32_t slot, float* dst) const;  // dst: [h_state_elems] f32
  void store_h_state(int layer, int32_t slot, const float* src);  // src: [h_state_elems] f32
  void load_conv_state(int layer, int32_t slot, float* dst) const;  // dst: [conv_state_elems]
  void store_conv_state(int layer, int32_t slot, const float* src);  // src: [conv_state_elems]

  // Copies every layer's state of src into dst (both allocated), bit for bit.
  void copy_slot(int32_t src, int32_t dst);
  // The same for one layer (a layer snapshots its own state mid-step, before later layers ran).
  void copy_layer(int layer, int32_t src, int32_t dst);

  // Sets slot to the state after the first num_accepted tokens of the verify row held by
  // buffer: row num_accepted - 1. The row's first token is always kept, so
  // 1 <= num_accepted <= buffer.num_tokens(); buffer layers and device must match the pool's.
  void rollback(int32_t slot, const VerifyStateBuffer& buffer, int num_accepted);

 private:
  void check_slot(int32_t slot) const;
  void check_layer(int layer) const;
  void zero_slot(int32_t slot);
  // One slot's row of a slot-major layer array.
  static Tensor slot_row(const Tensor& states, int32_t slot) { return states.slice_rows(slot, slot + 1); }

  SsmSlotListener listener_;
  std::vector<SsmLayerShape> layers_;
  int num_slots_;
  int num_scratch_ = 0;  // slots taken by reserve_scratch_slot
  SsmStateDType h_dtype_;
  Backend* backend_;  // null: host memory, plain memcpy
  Device device_;
  std::vector<Tensor> h_;     // per layer [num_slots, h_state_elems] f32 or f16
  std::vector<Tensor> conv_;  // per layer [num_slots, conv_state_elems] f32
  std::vector<int32_t> free_slots_;           // stack: back() is handed out next
  std::vector<uint8_t> allocated_;            // [num_slots]
};

}  // namespace strata
