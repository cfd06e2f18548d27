// `strata logits`: prefill the first N tokens (in chunks of C), decode the rest one at a
// time, and write every position's logits to a safetensors file: the model porter's tool.
#include <fmt/format.h>

#include <cstring>

#include "strata/cli/model_flags.h"
#include "strata/core/error.h"
#include "strata/engine/direct_session.h"
#include "strata/weights/safetensors_writer.h"

namespace strata::cli {
namespace {

struct LogitsFlags {
  ModelFlags model;
  std::string tokens;
  int32_t prefill = -1;  // -1: all tokens
  int32_t chunk = 0;
  std::string out;
};

void run_logits(const LogitsFlags& flags) {
  if (serve_as_other_rank(flags.model)) return;
  const std::vector<int32_t> tokens = parse_id_list(flags.tokens, "--tokens");
  const int32_t n = static_cast<int32_t>(tokens.size());
  const int32_t prefill = flags.prefill < 0 ? n : flags.prefill;
  if (prefill > n) fail("--prefill {} is more than the {} tokens given", prefill, n);
  OpenModel open = open_model(flags.model);
  const int64_t vocab = open.loaded.config.vocab_size;
  for (int32_t t : tokens)
    if (t >= vocab) fail("--tokens: id {} is outside the vocabulary ({} tokens)", t, vocab);
  DirectSession session(*open.runner);
  const int64_t id = session.add_sequence();
  Tensor all = Tensor::host(DType::kF32, {n, vocab});
  for (int32_t done = 0; done < n;) {
    int32_t step = done < prefill ? prefill - done : 1;
    if (done < prefill && flags.chunk > 0) step = std::min(step, flags.chunk);
    const Tensor logits = session.step({{.seq_id = id,
                                         .token_ids = {tokens.begin() + done, tokens.begin() + done + step},
                                         .logits = LogitsMode::kAll}})[0];
    std::memcpy(all.data_as<float>() + done * vocab, logits.data(), logits.nbytes());
    done += step;
  }
  write_safetensors(flags.out, {{"logits", all}});
  fmt::print("wrote logits [{}, {}] to {}\n", n, vocab, flags.out);
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto flags = std::make_shared<LogitsFlags>();
  CLI::App* cmd = app.add_subcommand("logits", "write the logits of every position to a safetensors file");
  add_model_flags(*cmd, flags->model);
  add_parallel_flags(*cmd, flags->model);
  cmd->add_option("--tokens", flags->tokens, "comma-separated token ids")->required();
  cmd->add_option("--prefill", flags->prefill, "tokens run as prefill (default: all)");
  cmd->add_option("--chunk", flags->chunk, "prefill chunk size (default: one chunk)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--out", flags->out, "output .safetensors file")->required();
  cmd->callback([flags] { run_logits(*flags); });
}

}  // namespace strata::cli
