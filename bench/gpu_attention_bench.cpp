// Decode attention lab: the decode kernel at real model shapes over batch x context, with its own
// split policy and with forced split counts (--splits) and split floors (--min-split-keys).
// Each launch reads one layer's KV from `layers` distinct caches, as a decode step does (past
// L2 when the step's KV is), back to back with PDL in a CUDA graph as the engine runs them;
// block tables are shuffled, cache values constant (the kernel's work does not depend on them).
// Prints JSON lines: microseconds a launch and TB/s of KV read.
//   gpu_attention_bench [--shapes 8b,30b,next] [--batches 1,8,32] [--contexts 512,1024,4096,16384]
//                       [--splits 0,1,2,4,8,16,32,64] [--min-split-keys 0,128,256,512] [--reps 20]
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#if defined(STRATA_WITH_CUDA)
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include "strata/backend/cuda/cuda_check.h"
#include "strata/ops/cuda/decode_attention.h"
#endif

namespace {

struct AttentionShape {
  std::string name;
  int num_q_heads, num_kv_heads, head_dim, num_layers;
};

const std::vector<AttentionShape> kShapes{{"8b", 32, 8, 128, 32}, {"30b", 32, 4, 128, 48}, {"next", 16, 2, 256, 6}};

struct Case {
  const AttentionShape* shape;
  int batch, context, splits, min_split_keys;
};

#if defined(STRATA_WITH_CUDA)
constexpr int kBlockSize = 16;
constexpr int64_t kMaxKvBytes = int64_t{24} << 30;   // the layers' caches together
constexpr int64_t kPastL2Bytes = int64_t{256} << 20;  // distinct caches up to this, past the 50 MB L2

void* device_random(int64_t bytes, uint64_t seed) {
  std::vector<uint16_t> host(bytes / 2);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  for (uint16_t& v : host) {  // bf16 in [-1/8, 1/8): finite scores, never constant
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    const float f = (static_cast<float>(state >> 40) / 16777216.0f - 0.5f) / 4.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    v = static_cast<uint16_t>(bits >> 16);
  }
  void* d = nullptr;
  STRATA_CUDA_CHECK(cudaMalloc(&d, bytes));
  STRATA_CUDA_CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice));
  return d;
}

// One layer's paged cache and the step's tables: [blocks, 16, Hkv, D] K and V.
struct LayerCache {
  void *k = nullptr, *v = nullptr;
};

struct Setup {
  std::vector<LayerCache> layers;
  void *q = nullptr, *out = nullptr;
  int32_t *kv_lens = nullptr, *tables = nullptr;
  int64_t blocks_per_row = 0, kv_bytes_per_layer = 0;
};

Setup make_setup(const Case& c) {
  const AttentionShape& s = *c.shape;
  Setup setup;
  setup.blocks_per_row = (c.context + kBlockSize - 1) / kBlockSize;
  const int64_t num_blocks = setup.blocks_per_row * c.batch;
  const int64_t cache_bytes = num_blocks * kBlockSize * s.num_kv_heads * s.head_dim * 2;
  setup.kv_bytes_per_layer = int64_t{2} * c.batch * c.context * s.num_kv_heads * s.head_dim * 2;
  const int64_t layers = std::clamp<int64_t>((kPastL2Bytes + 2 * cache_bytes - 1) / (2 * cache_bytes), 1, s.num_layers);
  for (int64_t l = 0; l < layers; ++l) {  // bf16 0x3C3C ~ 0.0115 everywhere: the kernel's work does not depend on it
    LayerCache cache;
    STRATA_CUDA_CHECK(cudaMalloc(&cache.k, cache_bytes));
    STRATA_CUDA_CHECK(cudaMalloc(&cache.v, cache_bytes));
    STRATA_CUDA_CHECK(cudaMemset(cache.k, 0x3C, cache_bytes));
    STRATA_CUDA_CHECK(cudaMemset(cache.v, 0x3C, cache_bytes));
    setup.layers.push_back(cache);
  }
  const int64_t q_bytes = int64_t{2} * c.batch * s.num_q_heads * s.head_dim;
  setup.q = device_random(q_bytes, 5);
  STRATA_CUDA_CHECK(cudaMalloc(&setup.out, q_bytes));
  std::vector<int32_t> table(num_blocks);
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937(7));
  const std::vector<int32_t> lens(c.batch, c.context);
  STRATA_CUDA_CHECK(cudaMalloc(&setup.tables, num_blocks * 4));
  STRATA_CUDA_CHECK(cudaMalloc(&setup.kv_lens, c.batch * 4));
  STRATA_CUDA_CHECK(cudaMemcpy(setup.tables, table.data(), num_blocks * 4, cudaMemcpyHostToDevice));
  STRATA_CUDA_CHECK(cudaMemcpy(setup.kv_lens, lens.data(), c.batch * 4, cudaMemcpyHostToDevice));
  return setup;
}

void free_setup(Setup& setup) {
  for (LayerCache& l : setup.layers) {
    STRATA_CUDA_CHECK(cudaFree(l.k));
    STRATA_CUDA_CHECK(cudaFree(l.v));
  }
  for (void* p : {setup.q, setup.out, static_cast<void*>(setup.kv_lens), static_cast<void*>(setup.tables)})
    STRATA_CUDA_CHECK(cudaFree(p));
}

void launch_layers(const Case& c, const Setup& setup, cudaStream_t stream) {
  const AttentionShape& s = *c.shape;
  for (const LayerCache& layer : setup.layers) {
    strata::cuda::decode_attention(
        {.q = static_cast<const __nv_bfloat16*>(setup.q), .k_cache = layer.k, .v_cache = layer.v,
         .out = static_cast<__nv_bfloat16*>(setup.out), .kv_lens = setup.kv_lens, .block_tables = setup.tables,
         .max_blocks_per_row = setup.blocks_per_row, .num_rows = c.batch, .num_q_heads = s.num_q_heads,
         .num_kv_heads = s.num_kv_heads, .block_size = kBlockSize, .head_dim = s.head_dim,
         .scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim)), .num_splits = c.splits,
         .min_split_keys = c.min_split_keys},
        stream);
  }
}

// Microseconds a launch: the graph of every layer's launch, replayed `reps` times.
double time_case(const Case& c, const Setup& setup, int reps) {
  cudaStream_t stream;
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  launch_layers(c, setup, stream);  // configures the kernel outside the capture
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  STRATA_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  launch_layers(c, setup, stream);
  STRATA_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  STRATA_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t start, stop;
  STRATA_CUDA_CHECK(cudaEventCreate(&start));
  STRATA_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < 3; ++i) STRATA_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  STRATA_CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < reps; ++i) STRATA_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  STRATA_CUDA_CHECK(cudaEventRecord(stop, stream));
  STRATA_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  STRATA_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  STRATA_CUDA_CHECK(cudaGraphExecDestroy(exec));
  STRATA_CUDA_CHECK(cudaGraphDestroy(graph));
  STRATA_CUDA_CHECK(cudaEventDestroy(start));
  STRATA_CUDA_CHECK(cudaEventDestroy(stop));
  STRATA_CUDA_CHECK(cudaStreamDestroy(stream));
  return 1e3 * ms / (static_cast<double>(reps) * setup.layers.size());
}

void report(const Case& c, const Setup& setup, double us) {
  const AttentionShape& s = *c.shape;
  std::printf("%s\n", fmt::format(R"({{"shape": "{}", "batch": {}, "context": {}, "splits": {}, "min_split_keys": {}, )"
                                  R"("layers": {}, "us": {:.2f}, "tb_s": {:.3f}}})",
                                  s.name, c.batch, c.context, c.splits, c.min_split_keys, setup.layers.size(), us,
                                  setup.kv_bytes_per_layer / (us * 1e-6) / 1e12)
                          .c_str());
  std::fflush(stdout);
}

// Every split lever at one shape, batch and context, on one set of caches.
void run_cases(const Case& base, const std::vector<int>& splits, const std::vector<int>& floors, int reps) {
  const AttentionShape& s = *base.shape;
  if (int64_t{4} * base.batch * base.context * s.num_kv_heads * s.head_dim > kMaxKvBytes) return;
  Setup setup = make_setup(base);
  for (int split : splits)
    for (int floor : floors) {
      Case c = base;
      c.splits = split, c.min_split_keys = floor;
      report(c, setup, time_case(c, setup, reps));
    }
  free_setup(setup);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"decode attention lab"};
  std::vector<std::string> shapes{"8b", "30b", "next"};
  std::vector<int> batches{1, 8, 32}, contexts{512, 1024, 4096, 16384}, splits{0}, floors{0};
  int reps = 20;
  app.add_option("--shapes", shapes, "8b, 30b, next")->delimiter(',');
  app.add_option("--batches", batches)->delimiter(',');
  app.add_option("--contexts", contexts)->delimiter(',');
  app.add_option("--splits", splits, "grid splits; 0: the kernel's choice")->delimiter(',');
  app.add_option("--min-split-keys", floors, "fewest keys a live split takes; 0: the kernel's (64)")->delimiter(',');
  app.add_option("--reps", reps, "graph replays timed");
  CLI11_PARSE(app, argc, argv);
#if defined(STRATA_WITH_CUDA)
  for (const AttentionShape& shape : kShapes) {
    if (std::find(shapes.begin(), shapes.end(), shape.name) == shapes.end()) continue;
    for (int batch : batches)
      for (int context : contexts) run_cases({&shape, batch, context, 0, 0}, splits, floors, reps);
  }
  return 0;
#else
  std::fprintf(stderr, "gpu_attention_bench: built without CUDA\n");
  return 1;
#endif
}
