// ForwardContext: what layers may use during one forward pass besides their weights:
// the backend, the temporaries, and the per-sequence state stores (KV blocks, SSM slots).
#pragma once

#include <span>

#include "strata/backend/backend.h"
#include "strata/cache/kv_cache.h"
#include "strata/model/workspace.h"
#include "strata/ops/elementwise.h"

namespace strata {

class Communicator;
class LoraSet;
struct PipelineLinks;
class SsmStatePool;
class VerifyStateBuffers;

struct ForwardContext {
  Backend& backend;
  Workspace& workspace;       // a layer's temporaries; reset after every layer
  Workspace& step_workspace;  // the model loop's own buffers; reset every step
  KvCache* kv_cache = nullptr;       // null for models without attention
  SsmStatePool* ssm_pool = nullptr;  // null for models without recurrent layers
  VerifyStateBuffers* verify_states = nullptr;  // per-token states of verify rows, by SSM slot
  DType activation_dtype = DType::kF32;
  int64_t kv_layer = -1;   // this layer's index among attention layers
  int64_t ssm_layer = -1;  // this layer's index among recurrent layers
  int64_t carry_layer = -1;  // the pool index of this layer's carry (LayerCaps::carry), or -1
  int64_t layer = -1;      // this layer's index in the model
  const LoraSet* lora = nullptr;  // the server's LoRA adapters, or null
  // The tensor-parallel group this rank's layers sum their partial outputs over; null: one rank.
  Communicator* tensor_parallel = nullptr;
  // The links to this pipeline stage's neighbours; null: one stage.
  const PipelineLinks* pipeline = nullptr;
  // Stage 0 with micro-batches in flight: the forward returns the last layer's output [T, hidden]
  // unsent, for the runner to send when the next stage is free (Model::receive_stage_output).
  bool hold_stage_output = false;
  Tensor lora_slots;              // [T] i32: each token's adapter slot, -1 for none
  // MTP speculation reads the states the lm_head reads, of every token: the model keeps them
  // in the step workspace ([T, hidden] activation dtype, after the final norm).
  bool keep_hidden_states = false;
  Tensor hidden_states;  // out: set by the forward when keep_hidden_states
  // EAGLE-3 reads the inputs of these target layers (ascending), each token's: the model keeps
  // them in the step workspace as [num aux layers, T, hidden] (activation dtype).
  std::span<const int64_t> aux_hidden_layers;
  Tensor aux_hidden_states;  // out: set by the forward when aux_hidden_layers is not empty
  Tensor token_ids;               // [T] i32: the step's tokens (hash-routed MoE reads them)

  Tensor temp(Shape shape) { return workspace.alloc(activation_dtype, shape); }
  Tensor temp_f32(Shape shape) { return workspace.alloc(DType::kF32, shape); }
  // An f32 intermediate as the step's activations, for a linear to read (a GPU's read bf16):
  // x itself where the dtypes agree, else a converted temp.
  Tensor as_activations(const Tensor& x) {
    if (x.dtype() == activation_dtype) return x;
    Tensor out = temp(x.shape());
    ops::convert(x, out);
    return out;
  }
};

}  // namespace strata
