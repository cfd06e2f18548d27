#include "strata/model/pipeline_stage.h"

#include <vector>

#include "strata/core/error.h"

namespace strata {

PipelineStage pipeline_stage(int64_t num_layers, int index, int count) {
  STRATA_CHECK(count >= 1 && index >= 0 && index < count);
  if (count > num_layers)
    fail("--pipeline-parallel-size {} exceeds the model's {} layers (num_hidden_layers); give each stage at "
         "least one layer", count, num_layers);
  std::vector<int64_t> sizes(count, num_layers / count);
  const int64_t remaining = num_layers % count;
  for (int64_t i = 2; i < remaining + 2; ++i) sizes[count - i] += 1;
  PipelineStage stage{.index = index, .count = count, .first_layer = 0, .end_layer = 0};
  for (int s = 0; s <= index; ++s) {
    stage.first_layer = stage.end_layer;
    stage.end_layer += sizes[s];
  }
  return stage;
}

int64_t weight_layer_index(std::string_view name) {
  constexpr std::string_view kLayers = "layers.";
  for (size_t at = name.find(kLayers); at != std::string_view::npos; at = name.find(kLayers, at + 1)) {
    if (at > 0 && name[at - 1] != '.') continue;
    size_t end = at + kLayers.size();
    int64_t layer = 0;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') layer = layer * 10 + (name[end++] - '0');
    if (end > at + kLayers.size() && (end == name.size() || name[end] == '.')) return layer;
  }
  return -1;
}

bool stage_holds_tensor(const PipelineStage& stage, std::string_view name, bool tie_word_embeddings) {
  if (const int64_t layer = weight_layer_index(name); layer >= 0) return stage.holds_layer(layer);
  if (name.ends_with("embed_tokens.weight") || name == "backbone.embeddings.weight")
    return stage.is_first() || (stage.is_last() && tie_word_embeddings);
  for (std::string_view head : {"lm_head.weight", "model.norm.weight", "backbone.norm_f.weight",
                                "model.language_model.norm.weight"})
    if (name == head) return stage.is_last();
  return true;
}

}  // namespace strata
