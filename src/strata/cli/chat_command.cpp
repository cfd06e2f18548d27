// `strata chat [--model PATH] [--prompt TEXT] [--image PATH ...]`: a conversation through the
// model's chat template, streamed to the terminal; interactive when no --prompt is given. Images
// go with the first user message, encoded as the server encodes image_url parts.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "strata/cli/default_model.h"
#include "strata/cli/model_flags.h"
#include "strata/cli/sampling_flags.h"
#include "strata/core/error.h"
#include "strata/engine/local_engine.h"
#include "strata/server/api_error.h"
#include "strata/server/vision_prompt.h"
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
  std::vector<std::string> images;  // files; with the first user message
};

struct ChatImages {
  std::optional<server::VisionInput> vision;
  std::vector<std::string> urls;  // file:// URLs of the --image files
};

// The model's image input for --image files (a strata::Error when it takes none).
ChatImages chat_images(const OpenModel& open, const ChatFlags& flags) {
  ChatImages out;
  if (flags.images.empty()) return out;
  if (open.loaded.model->vision_tower() == nullptr)
    fail("--image: this model takes text only (it has no vision tower: the checkpoint has no model.visual.*)");
  out.vision = server::vision_input(open.loaded, flags.model.model,
                                    {.max_images_per_prompt = static_cast<int32_t>(flags.images.size()),
                                     .allowed_local_media_path = "/"});
  for (const std::string& path : flags.images)
    out.urls.push_back("file://" + std::filesystem::absolute(path).lexically_normal().string());
  return out;
}

// The first user message's content: its images, then its text.
nlohmann::ordered_json user_content(const std::string& text, const ChatImages& images) {
  if (images.urls.empty()) return text;
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (size_t i = 0; i < images.urls.size(); ++i) parts.push_back({{"type", "image"}});
  parts.push_back({{"type", "text"}, {"text", text}});
  return parts;
}

GenerationRequest turn_request(const text::Tokenizer& tokenizer, const nlohmann::ordered_json& messages,
                               const ChatImages& images) {
  const ChatRenderRequest render{.messages = messages, .add_generation_prompt = true};
  if (images.urls.empty()) return {.prompt_ids = text::encode_conversation(tokenizer, render)};
  try {
    server::VisionPrompt prompt = server::encode_with_images(
        *images.vision, tokenizer, text::render_conversation(tokenizer, render), images.urls, "--image");
    return {.prompt_ids = std::move(prompt.ids), .images = std::move(prompt.images)};
  } catch (const server::ApiError& e) {
    fail("{}", e.what());
  }
}

// One assistant turn: generates, streams, returns the reply text.
std::string reply(LocalEngine& engine, const text::Tokenizer& tokenizer, const nlohmann::ordered_json& messages,
                  const ChatFlags& flags, const ChatImages& images) {
  GenerationRequest request = turn_request(tokenizer, messages, images);
  request.sampling = to_sampling_params(flags.sampling);
  request.max_tokens = flags.sampling.max_tokens;
  request.ignore_eos = flags.sampling.ignore_eos;
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
  if (serve_as_other_rank(flags.model)) return;
  flags.model.load_progress = true;
  OpenModel open = open_model(flags.model);
  auto tokenizer = text::load_tokenizer(flags.model.model);
  // One engine for the whole conversation: each turn's prompt extends the last one, so the
  // prefix cache serves everything but the new message.
  LocalEngine engine(*open.runner, *tokenizer, text::stop_token_ids(*tokenizer, open.loaded.config.eos_token_ids));
  const ChatImages images = chat_images(open, flags);
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!flags.system.empty()) messages.push_back({{"role", "system"}, {"content", flags.system}});
  if (!flags.prompt.empty()) {
    messages.push_back({{"role", "user"}, {"content", user_content(flags.prompt, images)}});
    reply(engine, *tokenizer, messages, flags, images);
    return;
  }
  std::string line;
  while (std::cout << "> " << std::flush, std::getline(std::cin, line)) {
    if (line.empty()) continue;
    if (line == "/exit" || line == "/quit") break;
    const bool first = std::none_of(messages.begin(), messages.end(), [](const auto& m) { return m["role"] == "user"; });
    messages.push_back({{"role", "user"}, {"content", first ? user_content(line, images) : nlohmann::ordered_json(line)}});
    messages.push_back({{"role", "assistant"}, {"content", reply(engine, *tokenizer, messages, flags, images)}});
  }
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto flags = std::make_shared<ChatFlags>();
  CLI::App* cmd = app.add_subcommand("chat", "talk to a model (interactive, or one turn with --prompt)");
  add_model_flags(*cmd, flags->model, /*model_required=*/false);
  add_parallel_flags(*cmd, flags->model);
  add_sampling_flags(*cmd, flags->sampling);
  flags->sampling.max_tokens = 256;
  cmd->add_option("--prompt,-p", flags->prompt, "one user message; prints the reply and exits");
  cmd->add_option("--system", flags->system, "a system message");
  cmd->add_option("--image", flags->images, "an image file (JPEG or PNG) sent with the first user message; "
                                            "repeat for more (models with a vision tower)");
  cmd->callback([flags] { run_chat(*flags); });
}

}  // namespace strata::cli
