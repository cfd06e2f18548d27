// Decode tokens/s of a dummy-weight model (default: SmolLM2-135M's shape, bf16) on the CPU
// through DirectSession, at batch 1 and 8, against the bytes-over-bandwidth floor: every
// step reads all weights once, so steps/s <= memory bandwidth / weight bytes. The bandwidth
// is measured here, with a parallel memcpy of buffers far larger than the caches.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "strata/backend/backend.h"
#include "strata/core/parallel.h"
#include "strata/engine/direct_session.h"
#include "strata/engine/model_runner.h"
#include "strata/model/model_loader.h"
#include "strata/model/model_weights.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Bytes moved (read + written) per second by a memcpy split over the pool's threads.
double memcpy_bandwidth(int64_t bytes) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) {
    const Clock::time_point start = Clock::now();
    strata::parallel_for(bytes, bytes / 64, [&](int64_t begin, int64_t end) {
      std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
    });
    if (rep > 0) best = std::max(best, 2.0 * static_cast<double>(bytes) / seconds_since(start));
  }
  return best;
}

// Prefills `batch` sequences with `prompt_len` tokens, then times `steps` decode steps of one
// token per sequence. Returns generated tokens per second.
double decode_tokens_per_s(strata::ModelRunner& runner, int batch, int prompt_len, int steps) {
  strata::DirectSession session(runner);
  std::vector<strata::StepInput> inputs;
  for (int b = 0; b < batch; ++b) {
    std::vector<int32_t> prompt(prompt_len);
    for (int i = 0; i < prompt_len; ++i) prompt[i] = (b * 131 + i * 17) % 1000 + 10;
    inputs.push_back({.seq_id = session.add_sequence(), .token_ids = prompt});
  }
  session.step(inputs);
  for (auto& in : inputs) in.token_ids = {42};
  session.step(inputs);  // warm-up decode step
  const Clock::time_point start = Clock::now();
  for (int s = 0; s < steps; ++s) session.step(inputs);
  return batch * steps / seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("CPU decode throughput of a dummy-weight model against the memory-bandwidth floor");
  std::string config = STRATA_DEFAULT_DECODE_CONFIG;
  int threads = 2, steps = 32, prompt_len = 32;
  int64_t copy_mib = 512;
  app.add_option("--config", config, "folder with the model's config.json");
  app.add_option("--threads", threads, "CPU threads");
  app.add_option("--steps", steps, "timed decode steps per batch size");
  app.add_option("--prompt-len", prompt_len, "prompt tokens per sequence before decoding");
  app.add_option("--copy-mib", copy_mib, "memcpy buffer for the bandwidth measurement");
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<strata::Backend> backend = strata::make_cpu_backend(threads);
  const double bandwidth = memcpy_bandwidth(copy_mib << 20);
  strata::LoadedModel loaded =
      strata::load_model({.model_path = config, .load_format = strata::LoadFormat::kDummy}, *backend);
  strata::ModelRunner runner(*loaded.model, *backend, strata::RunnerOptions{.num_kv_blocks = 256});
  const double weight_bytes = static_cast<double>(loaded.weights->num_bytes());
  fmt::print("model {} (dummy weights), {} threads, prompt {} tokens, {} timed steps\n", config,
             threads, prompt_len, steps);
  fmt::print("memcpy bandwidth {:.1f} GB/s (read + write); weights read per step {:.1f} MB\n",
             bandwidth / 1e9, weight_bytes / 1e6);
  for (int batch : {1, 8}) {
    const double tps = decode_tokens_per_s(runner, batch, prompt_len, steps);
    const double floor_tps = batch * bandwidth / weight_bytes;
    fmt::print("batch {}: {:.1f} tokens/s ({:.1f} ms/step); bandwidth floor {:.1f} tokens/s "
               "({:.1f} ms/step): {:.0f}% of it\n",
               batch, tps, 1000.0 * batch / tps, floor_tps, 1000.0 * batch / floor_tps,
               100.0 * tps / floor_tps);
  }
  return 0;
}
