// One process's part of a pipeline-parallel group: a contiguous run of the model's layers. Stage
// 0 also embeds the tokens; the last stage also holds the final norm and the head. Layers are
// dealt as vLLM deals them (get_pp_indices): evenly, the remainder going one each to the stages
// before the last, from the second-last down, so the stage with the head holds no extra layer.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace strata {

struct PipelineStage {
  int index = 0;
  int count = 1;
  int64_t first_layer = 0;
  int64_t end_layer = std::numeric_limits<int64_t>::max();  // one past the stage's last layer

  bool is_first() const { return index == 0; }
  bool is_last() const { return index == count - 1; }
  bool holds_layer(int64_t layer) const { return layer >= first_layer && layer < end_layer; }
};

// Stage `index` of `count` over `num_layers`; throws an Error when count exceeds num_layers.
PipelineStage pipeline_stage(int64_t num_layers, int index, int count);

// The layer a checkpoint tensor belongs to ("model.layers.12.mlp.up_proj.weight" -> 12, also
// "backbone.layers.3..." and "model.language_model.layers.0..."), or -1 for tensors outside
// the layers (embeddings, final norm, head).
int64_t weight_layer_index(std::string_view name);

// Whether `stage` loads the checkpoint tensor `name`: its layers' tensors; the embedding on stage 0
// (and on the last stage when the head is the tied embedding); the final norm and lm_head on the
// last stage; any other tensor outside the layers everywhere.
bool stage_holds_tensor(const PipelineStage& stage, std::string_view name, bool tie_word_embeddings);

}  // namespace strata
