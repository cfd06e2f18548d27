// Starting a chat request on the engine, shared by every API that maps onto the chat path:
// the conversation rendered through the model's template and tokenized, fitted to the
// context, its output constraint (JSON, forced tool calls) and LoRA adapter applied.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strata/server/chat_request.h"
#include "strata/server/generation_run.h"
#include "strata/server/served_model.h"

namespace strata::server {

// The rendered prompt's token ids; its end is kept in chat.prompt_tail for the reasoning
// parser. A 400 naming `field` when the template cannot render the conversation, or when the
// messages hold images the model does not take. The images, encoded, go to `images`; when it is
// null only the ids are made (each placeholder repeated per merged patch, nothing encoded).
std::vector<int32_t> encode_chat(const ServedModel& model, ChatRequest& chat, const char* field = "messages",
                                 std::shared_ptr<const MultimodalPrompt>* images = nullptr);

struct StartedChat {
  std::unique_ptr<GenerationRun> run;
  std::string model;  // the name that answers: the served model or the LoRA adapter
};

struct ChatStart {
  const std::string* model_name = nullptr;  // the request's `model`, if any
  ReasoningFormat reasoning = ReasoningFormat::kNone;  // --reasoning-parser
  const char* prompt_field = "messages";    // named in errors about the prompt
};

// Sets chat.reasoning (none for constrained output) and chat.prompt_tail, and submits the
// request. Throws ApiError for a request it refuses (unknown model, prompt over the context).
StartedChat start_chat(const ServedModel& model, ChatRequest& chat, const ChatStart& start);

}  // namespace strata::server
