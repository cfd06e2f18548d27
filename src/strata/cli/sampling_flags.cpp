#include "strata/cli/sampling_flags.h"

#include "strata/core/error.h"

namespace strata::cli {

void add_sampling_flags(CLI::App& command, SamplingFlags& flags) {
  command.add_option("--max-tokens", flags.max_tokens, "tokens to generate")->check(CLI::PositiveNumber);
  command.add_option("--temperature", flags.temperature, "0 for greedy");
  command.add_option("--top-p", flags.top_p, "nucleus sampling mass");
  command.add_option("--top-k", flags.top_k, "keep the k most likely tokens (0: off)");
  command.add_option("--min-p", flags.min_p, "drop tokens below min_p * p(top)");
  command.add_option("--repetition-penalty", flags.repetition_penalty, "HF-style repetition penalty");
  command.add_option("--presence-penalty", flags.presence_penalty, "OpenAI presence penalty");
  command.add_option("--frequency-penalty", flags.frequency_penalty, "OpenAI frequency penalty");
  command.add_option("--seed", flags.seed, "seed of the sampler (-1: random)");
  command.add_flag("--ignore-eos", flags.ignore_eos, "keep generating after end-of-sequence");
}

SamplingParams to_sampling_params(const SamplingFlags& flags) {
  SamplingParams p{.temperature = flags.temperature,
                   .top_k = flags.top_k,
                   .top_p = flags.top_p,
                   .min_p = flags.min_p,
                   .repetition_penalty = flags.repetition_penalty,
                   .presence_penalty = flags.presence_penalty,
                   .frequency_penalty = flags.frequency_penalty};
  if (flags.seed >= 0) p.seed = static_cast<uint64_t>(flags.seed);
  if (auto error = p.validate()) fail("{}", *error);
  return p;
}

}  // namespace strata::cli
