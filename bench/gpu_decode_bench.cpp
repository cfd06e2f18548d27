// GPU throughput of the real engine path (ModelRunner) on dummy bf16 (or FP8) weights: decode
// tokens/s per batch size at a given context, prefill tokens/s of one long prompt, and the
// time to first token of a shorter one, each against its roofline. Hybrid models keep one
// SSM state slot per sequence in device memory. Writes JSON lines.
//   gpu_decode_bench --model DIR [--batches 1,8,32,128,256] [--context 1024] [--steps 32]
//                    [--prefill 4096] [--ttft 1024] [--json FILE] [--no-graphs] [--profile]
//                    [--quantization fp8] [--kv-cache-dtype auto|fp8]
// --profile: after the warm-up, one step of each benchmark between cudaProfilerStart and
// Stop (for `ncu --profile-from-start off`), no timing.
#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#if defined(STRATA_WITH_CUDA)
#include <cuda_profiler_api.h>
#endif

#include "strata/core/error.h"
#include "strata/engine/model_runner.h"
#include "strata/model/model_loader.h"
#include "strata/weights/device_layout.h"

namespace strata {
namespace {

constexpr double kHbmBytesPerSecond = 4.25e12;   // measured copy bandwidth of an H200 here
constexpr double kBf16FlopsPerSecond = 780e12;   // measured 8k^3 bf16 matmul rate

struct BenchOptions {
  std::string model;
  std::vector<int64_t> batches{1, 8, 32, 128, 256};
  int64_t context = 1024, steps = 32, prefill = 4096, ttft = 1024;
  std::string json;
  bool graphs = true;
  bool profile = false;
  std::string quantization = "none";  // fp8: the linears' dummy weights quantized as --quantization fp8 does
  KvCacheDType kv_cache_dtype = KvCacheDType::kAuto;  // fp8: e4m3 keys and values, one byte each
};

// Brackets one step for a profiler started with --profile-from-start off.
void profiled(bool on) {
#if defined(STRATA_WITH_CUDA)
  if (on) {
    cudaProfilerStart();
  } else {
    cudaProfilerStop();
  }
#else
  (void)on;
#endif
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<int64_t> parse_list(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    out.push_back(std::stoll(text.substr(start, end - start)));
    start = end + 1;
  }
  return out;
}

BenchOptions parse_args(int argc, char** argv) {
  BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) fail("{} needs a value", a);
      return argv[++i];
    };
    if (a == "--model") o.model = next();
    else if (a == "--batches") o.batches = parse_list(next());  // 0: no decode runs
    else if (a == "--context") o.context = std::stoll(next());
    else if (a == "--steps") o.steps = std::stoll(next());
    else if (a == "--prefill") o.prefill = std::stoll(next());
    else if (a == "--ttft") o.ttft = std::stoll(next());
    else if (a == "--json") o.json = next();
    else if (a == "--no-graphs") o.graphs = false;
    else if (a == "--profile") o.profile = true;
    else if (a == "--quantization") o.quantization = next();
    else if (a == "--kv-cache-dtype") o.kv_cache_dtype = parse_kv_cache_dtype(next());
    else fail("unknown flag '{}'; see the usage at the top of gpu_decode_bench.cpp", a);
  }
  if (o.model.empty()) fail("--model DIR is required (a folder with config.json)");
  return o;
}

struct ModelCost {
  double weight_bytes = 0;      // read per decode step at batch 1: every weight except the embedding
                                // and the experts a token does not use
  double expert_bytes = 0;      // all routed experts' weights (MoE), part of no term above
  double num_experts = 0, top_k = 0;
  double matmul_params = 0;     // parameters a token multiplies with
  double kv_bytes_per_token = 0;  // K and V of one token, all layers
  double attn_flops_factor = 0;   // attention FLOPs = factor * q_len * kv_len
  double ssm_bytes_per_seq = 0;   // recurrent state (h + conv, f32) read and written per decode step
};

// Bytes a routed expert value takes in device memory: its stored dtype where the GPU keeps it
// (FP8, GGUF Q8_0 / Q4_K / Q6_K), else bf16.
double expert_bytes_per_value(const LoadedModel& m, bool fp8) {
  const WeightInfo* first = m.source ? m.source->find("model.layers.0.mlp.experts.0.gate_proj.weight") : nullptr;
  if (first == nullptr || first->shape.rank != 2) return fp8 ? 132.0 / 128.0 : 2.0;
  const int64_t k = first->shape[1];
  const DType dtype = keeps_device_layout(first->dtype, k) ? first->dtype : DType::kBF16;
  return static_cast<double>(dtype_bytes(dtype, k)) / static_cast<double>(k);
}

ModelCost model_cost(const LoadedModel& m, int64_t num_kv_layers, bool fp8, bool fp8_kv) {
  const ModelConfig& c = m.config;
  const double embed = static_cast<double>(c.vocab_size) * c.hidden_size;
  const double params = static_cast<double>(m.weights->num_parameters()) - (c.tie_word_embeddings ? 0 : embed);
  ModelCost cost;
  cost.num_experts = static_cast<double>(c.raw.value("num_experts", 0));
  cost.top_k = static_cast<double>(c.raw.value("num_experts_per_tok", 0));
  const double expert_params =
      cost.num_experts * 3.0 * c.hidden_size * static_cast<double>(c.raw.value("moe_intermediate_size", 0)) *
      c.num_hidden_layers;
  cost.expert_bytes = expert_bytes_per_value(m, fp8) * expert_params;
  // Bytes as stored (FP8 linears: 132 bytes per 128 values); the embedding table is not read.
  cost.weight_bytes = static_cast<double>(m.weights->num_bytes()) - (c.tie_word_embeddings ? 0 : 2 * embed) -
                      cost.expert_bytes;
  cost.matmul_params = params - expert_params + (cost.num_experts > 0 ? expert_params * cost.top_k / cost.num_experts : 0);
  cost.kv_bytes_per_token = 2.0 * num_kv_layers * c.num_key_value_heads * c.head_dim * (fp8_kv ? 1 : 2);
  cost.attn_flops_factor = 4.0 * num_kv_layers * c.num_attention_heads * c.head_dim;  // QK^T + PV
  for (const SsmLayerShape& shape : m.model->ssm_layer_shapes())
    cost.ssm_bytes_per_seq += 2.0 * 4 * static_cast<double>(shape.h_state_elems + shape.conv_state_elems);
  return cost;
}

class Bench {
 public:
  Bench(ModelRunner& runner, Backend& backend, const BenchOptions& o, const ModelCost& cost)
      : runner_(runner), backend_(backend), o_(o), cost_(cost) {}

  void decode(int64_t batch);
  // Weight bytes a decode step of `batch` rows reads: with experts, the expected share of
  // them that at least one row routes to (uniform routing).
  double step_weight_bytes(int64_t batch) const {
    if (cost_.num_experts == 0) return cost_.weight_bytes;
    const double untouched = std::pow(1.0 - cost_.top_k / cost_.num_experts, static_cast<double>(batch));
    return cost_.weight_bytes + cost_.expert_bytes * (1.0 - untouched);
  }
  void prefill(int64_t tokens, bool ttft);
  void write(const std::string& line) {
    std::printf("%s\n", line.c_str());
    if (!o_.json.empty()) std::ofstream(o_.json, std::ios::app) << line << "\n";
  }

 private:
  std::vector<int32_t> take_blocks(int64_t tokens) {
    std::vector<int32_t> blocks;
    const int64_t n = (tokens + runner_.block_size() - 1) / runner_.block_size();
    if (!runner_.block_pool().allocate_n(static_cast<int32_t>(n), blocks))
      fail("KV pool too small: {} blocks needed, {} free", n, runner_.block_pool().num_free());
    return blocks;
  }
  void give_back(const std::vector<int32_t>& blocks) {
    for (int32_t b : blocks) runner_.block_pool().release(b);
  }
  // A zeroed SSM state slot for one sequence of a hybrid model; -1 for other models.
  int32_t take_slot() {
    if (runner_.ssm_pool() == nullptr) return -1;
    const std::optional<int32_t> slot = runner_.ssm_pool()->allocate();
    if (!slot) fail("SSM pool too small: {} slots", runner_.ssm_pool()->capacity());
    return *slot;
  }
  void give_back_slot(int32_t slot) {
    if (slot >= 0) runner_.ssm_pool()->free(slot);
  }

  ModelRunner& runner_;
  Backend& backend_;
  const BenchOptions& o_;
  ModelCost cost_;
};

// `batch` sequences already `context` tokens long (the cache holds a fixed pattern: the
// values do not matter for timing), one token each per step.
void Bench::decode(int64_t batch) {
  std::vector<std::vector<int32_t>> tables;
  std::vector<int32_t> slots;  // hybrid models: the state stands in for `context` tokens
  for (int64_t b = 0; b < batch; ++b) {
    tables.push_back(take_blocks(o_.context + o_.steps + 8));
    slots.push_back(take_slot());
  }
  auto step_at = [&](int64_t i) {
    std::vector<StepRow> rows;
    for (int64_t b = 0; b < batch; ++b)
      rows.push_back({.seq_id = b, .token_ids = {static_cast<int32_t>((b * 31 + i) % 1000 + 100)},
                      .num_computed_tokens = static_cast<int32_t>(o_.context + i), .block_table = tables[b],
                      .ssm_slot = slots[b]});
    return StepBatch(std::move(rows), runner_.block_size());
  };
  for (int64_t i = 0; i < 3; ++i) {  // warm-up: plans, graph capture
    StepBatch s = step_at(i);
    runner_.execute_on_device(s);
  }
  backend_.synchronize();
  if (o_.profile) {
    StepBatch s = step_at(3);
    profiled(true);
    runner_.execute_on_device(s);
    backend_.synchronize();
    profiled(false);
    for (const auto& t : tables) give_back(t);
    for (int32_t slot : slots) give_back_slot(slot);
    return;
  }
  double device_only = 0, with_copy = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const double t0 = now_seconds();
    for (int64_t i = 0; i < o_.steps; ++i) {
      StepBatch s = step_at(3 + i);
      if (pass == 0) {
        runner_.execute_on_device(s);
      } else {
        runner_.execute(s);
      }
    }
    backend_.synchronize();
    (pass == 0 ? device_only : with_copy) = (now_seconds() - t0) / static_cast<double>(o_.steps);
  }
  for (const auto& t : tables) give_back(t);
  for (int32_t slot : slots) give_back_slot(slot);
  const double bytes = step_weight_bytes(batch) + cost_.kv_bytes_per_token * batch * (o_.context + 3 + o_.steps / 2) +
                       cost_.ssm_bytes_per_seq * batch;
  const double floor = bytes / kHbmBytesPerSecond;
  write(fmt::format(R"({{"bench":"decode","batch":{},"context":{},"step_ms":{:.3f},"tok_s":{:.1f},)"
                    R"("step_ms_with_logits_to_host":{:.3f},"tok_s_with_logits_to_host":{:.1f},)"
                    R"("roofline_step_ms":{:.3f},"roofline_tok_s":{:.1f},"fraction_of_roofline":{:.3f},"graphs":{}}})",
                    batch, o_.context, device_only * 1e3, batch / device_only, with_copy * 1e3,
                    batch / with_copy, floor * 1e3, batch / floor, floor / device_only, o_.graphs));
}

// One prompt of `tokens` in one step; ttft: timed to the logits on the host.
void Bench::prefill(int64_t tokens, bool ttft) {
  std::vector<double> times;
  for (int rep = 0; rep < 4; ++rep) {
    const std::vector<int32_t> table = take_blocks(tokens);
    const int32_t slot = take_slot();
    std::vector<int32_t> ids(tokens);
    for (int64_t i = 0; i < tokens; ++i) ids[i] = static_cast<int32_t>((i * 7919 + rep) % 100000 + 10);
    StepBatch s({{.seq_id = 0, .token_ids = ids, .num_computed_tokens = 0, .block_table = table, .ssm_slot = slot}},
                runner_.block_size());
    backend_.synchronize();
    if (o_.profile && rep == 1) profiled(true);
    const double t0 = now_seconds();
    if (ttft) {
      runner_.execute(s);
    } else {
      runner_.execute_on_device(s);
      backend_.synchronize();
    }
    if (rep > 0) times.push_back(now_seconds() - t0);  // the first run warms up
    if (o_.profile && rep == 1) {
      backend_.synchronize();
      profiled(false);
    }
    give_back(table);
    give_back_slot(slot);
  }
  std::sort(times.begin(), times.end());
  const double t = times[times.size() / 2];
  const double flops = 2 * cost_.matmul_params * tokens + cost_.attn_flops_factor * tokens * (tokens + 1) / 2.0;
  const double floor = flops / kBf16FlopsPerSecond;
  write(fmt::format(R"({{"bench":"{}","tokens":{},"ms":{:.2f},"tok_s":{:.1f},"roofline_ms":{:.2f},)"
                    R"("roofline_tok_s":{:.1f},"fraction_of_roofline":{:.3f},"tflops":{:.1f}}})",
                    ttft ? "ttft" : "prefill", tokens, t * 1e3, tokens / t, floor * 1e3, tokens / floor,
                    floor / t, flops / t / 1e12));
}

int run(int argc, char** argv) {
  const BenchOptions o = parse_args(argc, argv);
  std::unique_ptr<Backend> backend = make_cuda_backend(0);
  if (!backend) fail("no CUDA GPU visible (or a build without CUDA)");
  const double t0 = now_seconds();
  LoadedModel m = load_model({.model_path = o.model, .load_format = LoadFormat::kDummy,
                              .quantization = parse_weight_quantization(o.quantization)},
                             *backend);
  backend->synchronize();
  const double load_s = now_seconds() - t0;
  const int64_t max_batch = std::max<int64_t>(1, *std::max_element(o.batches.begin(), o.batches.end()));
  const int64_t per_seq = (o.context + o.steps + 8 + 15) / 16 + 1;
  const int64_t blocks = max_batch * per_seq + (std::max(o.prefill, o.ttft) + 15) / 16 + 64;
  ModelRunner runner(*m.model, *backend,
                     {.num_kv_blocks = blocks, .num_ssm_slots = max_batch + 1, .kv_cache_dtype = o.kv_cache_dtype,
                      .max_graph_batch_size = o.graphs ? 512 : 0});
  const ModelCost cost =
      model_cost(m, m.model->num_kv_layers(), o.quantization == "fp8", o.kv_cache_dtype == KvCacheDType::kFp8);
  Bench bench(runner, *backend, o, cost);
  bench.write(fmt::format(R"({{"bench":"setup","model":"{}","params":{},"weight_gb":{:.2f},"load_s":{:.1f},"kv_blocks":{},)"
                          R"("ssm_state_mb_per_seq":{:.1f}}})",
                          o.model, m.weights->num_parameters(), cost.weight_bytes / 1e9, load_s, blocks,
                          cost.ssm_bytes_per_seq / 2 / 1e6));
  if (o.ttft > 0) bench.prefill(o.ttft, true);
  if (o.prefill > 0) bench.prefill(o.prefill, false);
  for (int64_t b : o.batches)
    if (b > 0) bench.decode(b);
  return 0;
}

}  // namespace
}  // namespace strata

int main(int argc, char** argv) {
  try {
    return strata::run(argc, argv);
  } catch (const strata::Error& e) {
    std::fprintf(stderr, "gpu_decode_bench: %s\n", e.what());
    return 1;
  }
}
