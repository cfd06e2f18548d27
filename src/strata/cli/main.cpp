// strata: the command-line entry point. Each subcommand lives in its own file.
#include <cstdio>

#include "strata/cli/commands.h"
#include "strata/core/error.h"
#include "strata/core/logging.h"

int main(int argc, char** argv) {
  strata::log_to_stderr();
  CLI::App app{"Strata: an LLM inference engine and OpenAI-compatible server"};
  app.require_subcommand(1);
  strata::cli::add_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
