// `strata render --tokenizer PATH --messages FILE.json [--tools FILE.json]
// [--add-generation-prompt]`: prints the chat template's rendering of a conversation.
#include <fmt/format.h>

#include <fstream>

#include "strata/core/error.h"
#include "strata/text/chat_prompt.h"
#include "strata/text/load_tokenizer.h"

#include <CLI/CLI.hpp>

namespace strata::cli {
namespace {

struct RenderFlags {
  std::string tokenizer;
  std::string messages;
  std::string tools;
  std::string extra;
  bool add_generation_prompt = false;
};

nlohmann::ordered_json read_json_file(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) fail("{}: cannot open '{}'", flag, path);
  nlohmann::ordered_json json = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) fail("{}: '{}' is not valid JSON", flag, path);
  return json;
}

void run_render(const RenderFlags& flags) {
  auto tokenizer = text::load_tokenizer(flags.tokenizer);
  ChatRenderRequest request{.messages = read_json_file(flags.messages, "--messages"),
                            .add_generation_prompt = flags.add_generation_prompt};
  if (!request.messages.is_array()) fail("--messages: '{}' must hold a JSON array of messages", flags.messages);
  if (!flags.tools.empty()) request.tools = read_json_file(flags.tools, "--tools");
  if (!flags.extra.empty()) request.extra = read_json_file(flags.extra, "--extra");
  fmt::print("{}", text::render_conversation(*tokenizer, request));
}

}  // namespace

void add_render_command(CLI::App& app) {
  auto flags = std::make_shared<RenderFlags>();
  CLI::App* cmd = app.add_subcommand("render", "print the chat template's rendering of a conversation");
  cmd->add_option("--tokenizer", flags->tokenizer, "tokenizer.json, model folder or .gguf")->required();
  cmd->add_option("--messages", flags->messages, "JSON file with the messages array")->required();
  cmd->add_option("--tools", flags->tools, "JSON file with the tools array");
  cmd->add_option("--extra", flags->extra, "JSON file with extra template variables");
  cmd->add_flag("--add-generation-prompt", flags->add_generation_prompt, "end with the assistant prompt");
  cmd->callback([flags] { run_render(*flags); });
}

}  // namespace strata::cli
