#include "strata/cli/commands.h"

namespace strata::cli {

void add_info_command(CLI::App& app);
void add_generate_command(CLI::App& app);
void add_logits_command(CLI::App& app);
void add_tokenize_commands(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_render_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_rank_command(CLI::App& app);

void add_commands(CLI::App& app) {
  add_info_command(app);
  add_generate_command(app);
  add_logits_command(app);
  add_tokenize_commands(app);
  add_chat_command(app);
  add_render_command(app);
  add_serve_command(app);
  add_bench_command(app);
  add_rank_command(app);
}

}  // namespace strata::cli
