// All-reduce latency and bus bandwidth between N local ranks (forked processes, one per rank) for
// the shared-memory communicator or NCCL (one GPU per rank): f32 and bf16 from 4 KiB to 64 MiB,
// and a zero-byte barrier. Bus bandwidth follows nccl-tests: size / time * 2 (n - 1) / n, from
// the best of a few repeats (the median shows what other load on the machine took).
//   communicator_bench --ranks 2,4 --backend shm
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "strata/backend/backend.h"
#include "strata/core/error.h"
#include "strata/parallel/communicator.h"
#include "strata/parallel/local_ranks.h"

namespace {

using namespace strata;
using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::vector<int> ranks{2};
  std::string backend = "shm";
  int64_t min_bytes = int64_t{4} << 10;
  int64_t max_bytes = int64_t{64} << 20;
  int64_t slot_kib = 1024;
  int timeout_s = 120;
  int repeats = 5;
};

// A rank's communicator and, for NCCL, the GPU backend it runs on (created after the fork).
struct RankSetup {
  std::unique_ptr<Backend> backend;
  std::unique_ptr<Communicator> comm;
};

RankSetup open_rank(const BenchOptions& o, int world_size, int rank) {
  const CommunicatorOptions options{.rank = rank,
                                    .world_size = world_size,
                                    .group_name = fmt::format("communicator-bench-{}-{}", getppid(), world_size),
                                    .timeout = std::chrono::seconds(o.timeout_s),
                                    .slot_bytes = o.slot_kib << 10};
  RankSetup setup;
  if (o.backend == "shm") {
    setup.comm = make_shared_memory_communicator(options);
    return setup;
  }
  setup.backend = make_cuda_backend(rank);
  if (!setup.backend) fail("rank {} found no GPU {}: the NCCL backend needs one GPU per rank", rank, rank);
  setup.comm = make_nccl_communicator(options, *setup.backend);
  return setup;
}

// max_bytes of varied (never constant) values, in the rank's memory.
Tensor make_buffer(const RankSetup& setup, DType dtype, int64_t max_bytes, int rank) {
  const int64_t n = max_bytes / dtype_bytes(dtype, 1);
  Tensor host = Tensor::host(dtype, {n});
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>((i * 7919 + rank * 104729) % 2003) / 1001.f - 1.f;
    if (dtype == DType::kF32) {
      host.data_as<float>()[i] = v;
    } else {
      host.data_as<uint16_t>()[i] = f32_to_bf16(v);
    }
  }
  return setup.backend ? setup.backend->from_host(host) : host;
}

// The same on every rank: each size runs for about 1 GiB of data, 5 to 2000 times.
int iterations_for(int64_t bytes) {
  return static_cast<int>(std::clamp<int64_t>((int64_t{1} << 30) / std::max<int64_t>(bytes, 1), 5, 2000));
}

struct Timing {
  double min_us = 0;     // the best repeat: what the ranks do when nothing else takes their cores
  double median_us = 0;  // how much the machine's other load took
};

// Microseconds per call of `op` over `iterations` calls between barriers (which on NCCL wait for
// the stream), after a warm-up, for each of `repeats` repeats.
Timing time_op(Communicator& comm, int iterations, int repeats, const std::function<void()>& op) {
  for (int i = 0; i < std::max(1, iterations / 10); ++i) op();
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    comm.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) op();
    comm.barrier();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() / iterations);
  }
  std::sort(us.begin(), us.end());
  return {.min_us = us.front(), .median_us = us[us.size() / 2]};
}

std::string size_text(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

int run_rank(const BenchOptions& o, int world_size, int rank) {
  RankSetup setup = open_rank(o, world_size, rank);
  Communicator& comm = *setup.comm;
  const double bus_factor = 2.0 * (world_size - 1) / world_size;
  if (rank == 0) {
    fmt::print("\n{} backend, {} ranks{}\n\n", o.backend, world_size,
               o.backend == "shm" ? fmt::format(", slot {} KiB", o.slot_kib) : "");
    fmt::print("| collective | dtype | size | iterations | latency (us), best / median of {} | algbw (GB/s) | busbw (GB/s) |\n",
               o.repeats);
    fmt::print("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
  }
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    const Tensor buffer = make_buffer(setup, dtype, o.max_bytes, rank);
    for (int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 4) {
      const Tensor x = Tensor::view(buffer.data(), dtype, {bytes / dtype_bytes(dtype, 1)}, buffer.device());
      const int iterations = iterations_for(bytes);
      const Timing t = time_op(comm, iterations, o.repeats, [&] { comm.all_reduce_sum(x); });
      const double algbw = static_cast<double>(bytes) / t.min_us / 1e3;
      if (rank == 0)
        fmt::print("| all_reduce_sum | {} | {} | {} | {:.2f} / {:.2f} | {:.2f} | {:.2f} |\n", dtype_name(dtype),
                   size_text(bytes), iterations, t.min_us, t.median_us, algbw, algbw * bus_factor);
    }
  }
  const Timing t = time_op(comm, 2000, o.repeats, [&] { comm.barrier(); });
  if (rank == 0) fmt::print("| barrier | - | 0 B | 2000 | {:.2f} / {:.2f} | - | - |\n", t.min_us, t.median_us);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
  CLI::App app{"all-reduce latency and bus bandwidth between local ranks (forked processes)"};
  app.add_option("--ranks", o.ranks, "world sizes to run, comma-separated")->delimiter(',');
  app.add_option("--backend", o.backend, "shm (CPU shared memory) or nccl (one GPU per rank)")
      ->check(CLI::IsMember({"shm", "nccl"}));
  app.add_option("--min-bytes", o.min_bytes, "smallest all-reduce (sizes grow by 4x)");
  app.add_option("--max-bytes", o.max_bytes, "largest all-reduce");
  app.add_option("--slot-kib", o.slot_kib, "shm: bytes a rank posts per step, in KiB");
  app.add_option("--timeout-s", o.timeout_s, "seconds a rank waits for the others");
  app.add_option("--repeats", o.repeats, "timed repeats per size (best and median reported)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  int failures = 0;
  for (const int world_size : o.ranks) {
    const std::vector<int> codes =
        run_local_ranks(world_size, [&](int rank) { return run_rank(o, world_size, rank); }, std::chrono::minutes(30));
    for (size_t r = 0; r < codes.size(); ++r) {
      if (codes[r] == 0) continue;
      fmt::print(stderr, "rank {} of {} ended with {}\n", r, world_size, codes[r]);
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
