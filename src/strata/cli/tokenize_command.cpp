// `strata tokenize` (stdin bytes -> JSON array of ids) and `strata detokenize` (JSON array
// of ids on stdin -> text, no newline added): for checking the tokenizer against others.
#include "strata/cli/tokenize_command.h"

#include <cstdio>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/load_tokenizer.h"

namespace strata::cli {
namespace {

std::string read_stdin() {
  std::freopen(nullptr, "rb", stdin);
  std::string data;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), stdin)) > 0) data.append(buffer, n);
  return data;
}

void run_tokenize(const std::string& path, bool add_special) {
  const auto tokenizer = text::load_tokenizer(path);
  const std::vector<int32_t> ids = tokenizer->encode(read_stdin(), add_special);
  fmt::print("[{}]\n", fmt::join(ids, ", "));
}

void run_detokenize(const std::string& path, bool skip_special) {
  const auto tokenizer = text::load_tokenizer(path);
  std::vector<int32_t> ids;
  try {
    ids = nlohmann::json::parse(read_stdin()).get<std::vector<int32_t>>();
  } catch (const nlohmann::json::exception& e) {
    fail("detokenize expects a JSON array of integer ids on stdin: {}", e.what());
  }
  const std::string text = tokenizer->decode(ids, skip_special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void add_tokenize_commands(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  auto add_special = std::make_shared<bool>(false);
  CLI::App* tokenize = app.add_subcommand("tokenize", "Encode all of stdin; print the ids as a JSON array");
  tokenize->add_option("--tokenizer", *path, "tokenizer.json or a model folder")->required();
  tokenize->add_flag("--add-special", *add_special, "add the tokenizer's special tokens (bos/eos)");
  tokenize->callback([path, add_special] { run_tokenize(*path, *add_special); });

  auto detok_path = std::make_shared<std::string>();
  auto skip_special = std::make_shared<bool>(false);
  CLI::App* detokenize = app.add_subcommand("detokenize", "Decode a JSON array of ids from stdin; print the text");
  detokenize->add_option("--tokenizer", *detok_path, "tokenizer.json or a model folder")->required();
  detokenize->add_flag("--skip-special", *skip_special, "leave special tokens out of the text");
  detokenize->callback([detok_path, skip_special] { run_detokenize(*detok_path, *skip_special); });
}

}  // namespace strata::cli
