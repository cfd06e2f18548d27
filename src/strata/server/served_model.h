// ServedModel: what every endpoint handler reads: the engine behind the service, the
// tokenizer, and the names the model answers to. A checkpoint without a tokenizer is served
// with the id tokenizer (token i spelled "<i>"): it decodes output but never encodes text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/core/model_config.h"
#include "strata/server/generation_service.h"
#include "strata/server/tool_parsers/tool_parser.h"
#include "strata/text/tokenizer.h"

namespace strata::server {

struct VisionInput;

struct ServedModel {
  GenerationService* service = nullptr;
  const text::Tokenizer* tokenizer = nullptr;  // decodes output; encodes only when accepts_text
  bool accepts_text = true;                    // false: text prompts and chat answer 400
  std::string served_name;                     // the id in responses and /v1/models
  std::vector<std::string> accepted_names;     // served_name plus the model path's basename
  std::vector<std::string> lora_names;         // LoRA adapters by slot: requests name them as `model`
  std::vector<std::string> lora_paths;
  std::string model_path;
  int64_t vocab_size = 0;                      // of the model (token ids must be below it)
  const PoolerConfig* pooler = nullptr;        // a pooling model: embeddings or scores, no generation
  int64_t created_unix = 0;                    // when the server started
  const ToolParser* tool_parser = nullptr;     // how its output writes tool calls (null: hermes)
  const VisionInput* vision = nullptr;         // a model that takes images (null: text only)
  bool trust_request_chat_template = false;    // --trust-request-chat-template: requests may send their own
};

// The tokenizer for encoding text, or a 400 saying this model takes token ids only.
const text::Tokenizer& require_tokenizer(const ServedModel& model, const char* what);
// A 400 unless the model serves `route`'s task: generation routes need a generative model,
// embeddings an embedding model, score / rerank / classify a classifier.
enum class ModelTask : uint8_t { kGenerate, kEmbed, kClassify };
void require_task(const ServedModel& model, ModelTask task, const char* route);
// Throws a 404 model_not_found unless `name` (absent = ok) is one the model answers to.
// Returns the LoRA slot `name` selects, -1 for the base model.
int32_t check_model_name(const ServedModel& model, const std::string* name);
// Fills what a LoRA slot changes in a request: the adapter and its own prefix-cache
// namespace. The response's model name for it.
std::string apply_lora_choice(const ServedModel& model, int32_t lora_slot, GenerationRequest& request);

}  // namespace strata::server
