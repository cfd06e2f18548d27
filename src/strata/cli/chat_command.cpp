// `strata chat [--model PATH] [--prompt TEXT]`: a conversation through the model's chat
// template, streamed to the terminal; interactive when no --prompt is given.
#include <fmt/format.h>

#include <iostream>

#include "strata/cli/default_model.h"
#include "strata/cli/model_flags.h"
#include "strata/cli/sampling_flags.h"
#include "strata/engine/local_engine.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/incremental_detokenizer.h"
#include "strata/text/load_tokenizer.h"

namespace strata::cli {
namespace {

struct ChatFlags {
  ModelFlags model;
  SamplingFlags sampling;
  std::string prompt;
  std::string system;
};

// One assistant turn: generates, streams, returns the reply text.
std::string reply(LocalEngine& engine, const text::Tokenizer& tokenizer,
                  const nlohmann::ordered_json& messages, const ChatFlags& flags) {
  GenerationRequest request{
      .prompt_ids = text::encode_conversation(tokenizer, {.messages = messages, .add_generation_prompt = true}),
      .sampling = to_sampling_params(flags.sampling),
      .max_tokens = flags.sampling.max_tokens,
      .ignore_eos = flags.sampling.ignore_eos};
  text::IncrementalDetokenizer detok(tokenizer, /*skip_special_tokens=*/true);
  std::string text;
  engine.generate(request, [&](int32_t token) {
    const std::string piece = detok.push(token);
    text += piece;
    std::cout << piece << std::flush;
    return true;
  });
  const std::string rest = detok.finish();
  std::cout << rest << std::endl;
  return text + rest;
}

void run_chat(ChatFlags flags) {
  if (flags.model.model.empty()) flags.model.model = default_model_path();
  resolve_model_name(flags.model);
  flags.model.load_progress = true;
  OpenModel open = open_model(flags.model);
  auto tokenizer = text::load_tokenizer(flags.model.model);
  // One engine for the whole conversation: each turn's prompt extends the last one, so the
  // prefix cache serves everything but the new message.
  LocalEngine engine(*open.runner, *tokenizer, text::stop_token_ids(*tokenizer, open.loaded.config.eos_token_ids));
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!flags.system.empty()) messages.push_back({{"role", "system"}, {"content", flags.system}});
  if (!flags.prompt.empty()) {
    messages.push_back({{"role", "user"}, {"content", flags.prompt}});
    reply(engine, *tokenizer, messages, flags);
    return;
  }
  std::string line;
  while (std::cout << "> " << std::flush, std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (line == "/exit" || line == "/quit") break;
    messages.push_back({{"role", "user"}, {"content", line}});
    messages.push_back({{"role", "assistant"}, {"content", reply(engine, *tokenizer, messages, flags)}});
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto flags = std::make_shared<ChatFlags>();
  CLI::App* cmd = app.add_subcommand("chat", "talk to a model (interactive, or one turn with --prompt)");
  add_model_flags(*cmd, flags->model, /*model_required=*/false);
  add_sampling_flags(*cmd, flags->sampling);
  flags->sampling.max_tokens = 256;
  cmd->add_option("--prompt,-p", flags->prompt, "one user message; prints the reply and exits");
  cmd->add_option("--system", flags->system, "a system message");
  cmd->callback([flags] { run_chat(*flags); });
}

}  // namespace strata::cli
