#include "strata/cli/serve_replicas.h"

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata::cli {
namespace {

void check_data_parallel_flags(const ModelFlags& flags, const EngineOptions& engine, int32_t num_replicas) {
  if (num_replicas < 1)
    fail("--data-parallel-size is {}; it must be at least 1 (the number of engine replicas)", num_replicas);
  if (num_replicas == 1) return;
  if (flags.tensor_parallel.size > 1)
    fail("--data-parallel-size {} does not combine with --tensor-parallel-size {} yet; use one of them",
         num_replicas, flags.tensor_parallel.size);
  if (flags.pipeline_parallel.size > 1)
    fail("--data-parallel-size {} does not combine with --pipeline-parallel-size {} yet; use one of them",
         num_replicas, flags.pipeline_parallel.size);
  if (engine.kv_events.publishes())
    fail("--kv-events-config does not combine with --data-parallel-size {} yet (each replica would bind the same "
         "endpoint); leave one of them out", num_replicas);
}

}  // namespace

server::GenerationService& ServeEngines::service() {
  if (front) return *front;
  return *services[0];
}

std::optional<std::string> ServeEngines::fatal_error() const {
  for (size_t r = 0; r < engines.size(); ++r)
    if (std::optional<std::string> fatal = engines[r]->fatal_error())
      return engines.size() == 1 ? *fatal : fmt::format("replica {}: {}", r, *fatal);
  return std::nullopt;
}

ServeReplicas open_serve_replicas(const ModelFlags& flags, const EngineOptions& engine, int32_t num_replicas) {
  check_data_parallel_flags(flags, engine, num_replicas);
  ServeReplicas replicas;
  replicas.models.push_back(open_model(flags, engine.speculative));
  const OpenModel& first = replicas.models[0];
  const bool on_gpus = !first.backend->device().is_cpu();
  if (num_replicas > 1 && on_gpus && first.loaded.model->vision_tower() != nullptr)
    fail("--data-parallel-size {} on GPUs does not serve models that take images yet (the server encodes images "
         "on GPU 0); serve it with one replica", num_replicas);
  replicas.runners.push_back(first.runner.get());
  replicas.draft_runners.push_back(first.draft_runner.get());
  for (int32_t r = 1; r < num_replicas; ++r) {
    if (on_gpus) {
      ModelFlags gpu_flags = flags;
      gpu_flags.device = "cuda";
      gpu_flags.cuda_device = r;
      OpenModel& open = replicas.models.emplace_back(open_model(gpu_flags, engine.speculative));
      replicas.runners.push_back(open.runner.get());
      replicas.draft_runners.push_back(open.draft_runner.get());
      continue;
    }
    ReplicaRunners own = open_replica_runners(replicas.models[0], flags, engine.speculative);
    replicas.runners.push_back(own.runner.get());
    replicas.draft_runners.push_back(own.draft_runner.get());
    replicas.own_runners.push_back(std::move(own.runner));
    if (own.draft_runner) replicas.own_runners.push_back(std::move(own.draft_runner));
  }
  return replicas;
}

ServeEngines start_engines(const ServeReplicas& replicas, const text::Tokenizer& tokenizer,
                           const std::vector<int32_t>& eos_token_ids, const EngineOptions& options) {
  ServeEngines out;
  std::vector<server::GenerationService*> services;
  for (int32_t r = 0; r < replicas.size(); ++r) {
    EngineOptions replica_options = options;
    replica_options.data_parallel_rank = r;
    replica_options.data_parallel_size = replicas.size();
    out.engines.push_back(std::make_unique<Engine>(*replicas.runners[r], tokenizer, eos_token_ids, replica_options,
                                                   replicas.draft_runners[r]));
    out.services.push_back(std::make_unique<server::EngineService>(*out.engines.back()));
    services.push_back(out.services.back().get());
  }
  if (replicas.size() == 1) return out;
  const ModelRunner& runner = *replicas.runners[0];
  const bool caches_prefixes = options.enable_prefix_caching && replicas.first().loaded.model->causal();
  out.front = std::make_unique<server::DataParallelService>(
      services, server::DataParallelOptions{.block_size = static_cast<int32_t>(runner.block_size()),
                                            .prefix_table_blocks = runner.num_kv_blocks(),
                                            .enable_prefix_affinity = caches_prefixes});
  return out;
}

}  // namespace strata::cli
