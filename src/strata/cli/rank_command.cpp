#include "strata/cli/rank_command.h"

#include <fmt/format.h>

#include <memory>

#include "strata/core/error.h"

namespace strata::cli {

std::vector<std::string> model_flag_args(const ModelFlags& flags) {
  std::vector<std::string> args{
      "--model", flags.model, "--revision", flags.revision, "--load-format", flags.load_format,
      "--quantization", flags.quantization, "--device", flags.device, "--threads", std::to_string(flags.threads),
      "--num-kv-blocks", std::to_string(flags.num_kv_blocks), "--ssm-state-dtype", flags.ssm_state_dtype,
      "--kv-cache-dtype", flags.kv_cache_dtype,
      // {} prints the shortest text that reads back as the same double.
      "--gpu-memory-utilization", fmt::format("{}", flags.gpu_memory_utilization), "--runner", flags.pooling.runner,
      "--tensor-parallel-size", std::to_string(flags.tensor_parallel.size),
      "--pipeline-parallel-size", std::to_string(flags.pipeline_parallel.size)};
  // CLI11 takes an empty value for a missing one: unset strings stay out.
  if (!flags.pooling.task.empty()) args.insert(args.end(), {"--task", flags.pooling.task});
  if (!flags.pooling.pooler_config.empty()) args.insert(args.end(), {"--pooler-config", flags.pooling.pooler_config});
  if (flags.tensor_parallel.expert_parallel) args.push_back("--enable-expert-parallel");
  if (flags.tensor_parallel.dispatch_tokens) args.insert(args.end(), {"--expert-dispatch", "all-to-all"});
  return args;
}

RankCommand rank_command(const std::string& program, const ModelFlags& flags,
                         const std::optional<LoraCapacity>& lora) {
  RankCommand command{.program = program, .args = {program, "rank"}};
  const std::vector<std::string> model = model_flag_args(flags);
  command.args.insert(command.args.end(), model.begin(), model.end());
  if (lora)
    command.args.insert(command.args.end(), {"--max-loras", std::to_string(lora->max_loras), "--max-lora-rank",
                                             std::to_string(lora->max_lora_rank)});
  return command;
}

std::optional<LoraCapacity> RankLoraFlags::capacity() const {
  if (max_loras == 0) return std::nullopt;
  return LoraCapacity{.max_loras = max_loras, .max_lora_rank = max_lora_rank};
}

void add_rank_lora_flags(CLI::App& command, RankLoraFlags& flags) {
  command.add_option("--max-loras", flags.max_loras, "LoRA slots that rank 0 loads adapters into by path")
      ->check(CLI::PositiveNumber);
  command.add_option("--max-lora-rank", flags.max_lora_rank, "the largest adapter rank those slots take")
      ->check(CLI::PositiveNumber);
}

void add_rank_command(CLI::App& app) {
  struct RankFlags {
    ModelFlags model;
    RankLoraFlags lora;
  };
  auto flags = std::make_shared<RankFlags>();
  CLI::App* cmd = app.add_subcommand("rank", "a parallel rank that a rank 0 other than this command started");
  cmd->group("");  // hidden: only rank 0 starts it
  add_model_flags(*cmd, flags->model);
  add_parallel_flags(*cmd, flags->model);
  add_rank_lora_flags(*cmd, flags->lora);
  cmd->callback([flags] {
    if (!serve_as_other_rank(flags->model, flags->lora.capacity()))
      fail("strata rank runs a rank that rank 0 started (--tensor-parallel-rank or --pipeline-parallel-rank above "
           "0); to run a model, use strata generate or strata serve");
  });
}

}  // namespace strata::cli
