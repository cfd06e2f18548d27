// ModelRunner: runs one StepBatch through the model on its backend. It owns what a forward
// needs besides weights: the KV cache and its block pool, the SSM state pool, and the
// workspaces. Everything above it (sessions, the scheduler) speaks in StepRows.
#pragma once

#include <memory>

#include "strata/cache/block_pool.h"
#include "strata/cache/kv_cache.h"
#include "strata/cache/ssm_state_pool.h"
#include "strata/cache/verify_state_buffers.h"
#include "strata/model/model.h"
#include "strata/model/step_batch.h"
#include "strata/model/workspace.h"

namespace strata {

struct RunnerOptions {
  int64_t num_kv_blocks = 0;  // 0: enough for max_model_len tokens of 8 sequences
  int64_t block_size = 16;
  int64_t num_ssm_slots = 16;   // live sequences plus snapshots (hybrid models)
  int64_t max_verify_tokens = 16;  // longest verify row whose SSM states can be rolled back
};

class ModelRunner {
 public:
  ModelRunner(const Model& model, Backend& backend, const RunnerOptions& options);
  ~ModelRunner();

  // Runs the step; returns the logits [step.num_logits(), vocab] f32 in host memory.
  Tensor execute(StepBatch& step);

  const Model& model() const { return model_; }
  Backend& backend() { return backend_; }
  BlockPool& block_pool() { return *block_pool_; }
  KvCache* kv_cache() { return kv_cache_.get(); }
  // Null for models without recurrent layers.
  SsmStatePool* ssm_pool() { return ssm_pool_.get(); }
  VerifyStateBuffers* verify_states() { return verify_states_.get(); }
  int64_t max_verify_tokens() const { return options_.max_verify_tokens; }
  // Copies one KV block's contents (every attention layer) into another block.
  void copy_kv_block(int32_t src, int32_t dst);
  int64_t block_size() const { return options_.block_size; }

 private:
  const Model& model_;
  Backend& backend_;
  RunnerOptions options_;
  std::unique_ptr<BlockPool> block_pool_;
  std::unique_ptr<KvCache> kv_cache_;
  std::unique_ptr<SsmStatePool> ssm_pool_;
  std::unique_ptr<VerifyStateBuffers> verify_states_;
  Workspace layer_workspace_, step_workspace_;
};

}  // namespace strata
