// A /v1/chat/completions body read into what the template and the engine need: the
// conversation (content-part arrays joined to text, tool-call arguments given to the
// template as objects), the tools (rendered whatever tool_choice says, as vLLM does), the
// tool choice, the output constraint and the generation fields.
#pragma once

#include <memory>

#include "strata/engine/json_schema_grammar.h"

#include "strata/server/generation_fields.h"
#include "strata/server/json_fields.h"
#include "strata/server/reasoning_parser.h"
#include "strata/server/tool_choice.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/chat_template.h"

namespace strata::server {

struct ChatRequest {
  ChatRenderRequest render;
  text::ChatPromptOptions prompt_options;  // vLLM's chat_template and continue_final_message
  GenerationFields fields;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  bool logprobs = false;
  bool parse_tool_calls = false;  // tools given and tool_choice is not "none"
  ToolChoice tool_choice;         // its `forced` calls (set by start_chat) are enforced by constrained decoding
  bool json_object = false;       // response_format {"type": "json_object"}: enforced
  std::shared_ptr<const CompiledSchema> json_schema;  // response_format json_schema: enforced
  std::shared_ptr<const CompiledGrammar> grammar;     // structured_outputs regex, choice or grammar
  bool include_reasoning = true;  // vLLM's include_reasoning: false drops the thinking from the reply
  // Set by the handler, not read from the body: the server's --reasoning-parser (none for
  // constrained output, which is written from its first token) and the end of the rendered
  // prompt (where the template may have opened or closed the thinking already).
  ReasoningFormat reasoning = ReasoningFormat::kNone;
  std::string prompt_tail;
  const ToolParser* tool_parser = nullptr;  // the served model's (null: hermes)
  std::vector<std::string> image_urls;      // of the image_url parts, in order (the template sees {"type": "image"})
};

// A 400 naming the field for anything malformed.
ChatRequest read_chat_request(const Json& body, int64_t vocab_size);

// The conversation part alone (also used by /tokenize): messages, tools,
// chat_template_kwargs, reasoning_effort (a template variable), add_generation_prompt. The
// image_url parts' URLs go to `image_urls` when given.
ChatRenderRequest read_conversation(const Json& body, std::vector<std::string>* image_urls = nullptr);

}  // namespace strata::server
