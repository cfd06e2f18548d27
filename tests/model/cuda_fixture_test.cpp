// Whole models on the CUDA backend: every registered architecture's HF fixture (hybrids with
// their SSM state in device memory too) against transformers' logits (bf16 tolerances), and a dummy-weight Llama-3.1-8B cut to two layers
// against the CPU backend on the same bit-identical bf16 weights. Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "model/fixture_support.h"
#include "strata/core/error.h"
#include "strata/model/registry.h"
#include "test_support.h"

namespace strata::test {
namespace {

struct LogitsAgreement {
  double rel_l2 = 0;
  double top1 = 0;  // fraction of rows with the same argmax
  bool finite = true;
  double sum_sq_error = 0, sum_sq_ref = 0;  // rel_l2's terms, to pool several sequences
  int64_t rows = 0, same = 0;
};

LogitsAgreement agreement(const Tensor& got, const Tensor& ref) {
  const int64_t rows = got.dim(0), vocab = got.dim(1);
  double num = 0, den = 0;
  int64_t same = 0;
  LogitsAgreement a;
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = got.data_as<float>() + r * vocab;
    const float* e = ref.data_as<float>() + r * vocab;
    for (int64_t i = 0; i < vocab; ++i) {
      if (!std::isfinite(g[i])) a.finite = false;
      num += (static_cast<double>(g[i]) - e[i]) * (static_cast<double>(g[i]) - e[i]);
      den += static_cast<double>(e[i]) * e[i];
    }
    same += std::max_element(g, g + vocab) - g == std::max_element(e, e + vocab) - e;
  }
  a.rel_l2 = std::sqrt(num / den);
  a.top1 = static_cast<double>(same) / static_cast<double>(rows);
  a.sum_sq_error = num, a.sum_sq_ref = den, a.rows = rows, a.same = same;
  return a;
}

// The logits fixtures of the shared folder and of this repository's tests/fixtures/hf.
std::vector<std::string> registered_fixtures() {
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  const std::vector<std::string> supported = supported_model_types();
  for (const fs::path& root : {fs::path(fixtures_dir()) / "hf", fs::path(STRATA_LOCAL_FIXTURES_DIR) / "hf"}) {
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      const fs::path config = entry.path() / "config.json";
      if (!fs::exists(config)) continue;
      std::ifstream in(config);
      const std::string type = nlohmann::json::parse(in).value("model_type", "");
      std::ifstream in_reference(entry.path() / "reference.json");
      const nlohmann::json reference = in_reference ? nlohmann::json::parse(in_reference) : nlohmann::json::object();
      const bool has_logits = reference.contains("sequences");  // not pooling models
      // Prompts with images need their images: cuda_qwen3_5_vision_test.cpp runs them.
      const bool has_images =
          has_logits && !reference["sequences"].empty() && reference["sequences"][0].contains("images");
      if (has_logits && !has_images &&
          std::find(supported.begin(), supported.end(), type) != supported.end())
        names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());  // a local copy of a shared one
  return names;
}

// One fixture's sequences, whole and in chunks of 5, against transformers' logits.
void expect_matches_transformers(const std::string& name) {
  Fixture f = load_fixture(name, make_cuda_backend(0));
  // MoE: near-tied router logits pick other experts under bf16 activations (a discrete jump
  // for that token, and through attention for the ones after it). transformers itself in
  // bf16 against these f32 references (scripts/fixtures/hf_bf16_agreement.py): rel L2
  // 4.8e-2 (mixtral) to 1.05e-1 (deepseek_v3_yarn), top-1 0.95-0.99; dense 8e-3 to 1.2e-2.
  const nlohmann::json& raw = f.loaded.config.raw;
  const bool moe = has_moe_layers(raw);
  // Qwen3-Next: Gated DeltaNet outputs feed those routers (transformers bf16: 1.05e-1, top-1
  // 0.90). Measured on an H200: rel L2 up to 0.176, top-1 0.857. Qwen4-Exp (DeltaNet + MoE under
  // gated streams) takes the same bar; not yet measured on a GPU.
  const bool gdn_moe = moe && raw.contains("linear_num_value_heads");
  // Qwen3.5 dense: Gated DeltaNet layers in bf16 (transformers bf16: 1.71e-2, top-1 0.962 over
  // greedy margins down to 3e-3); the bar not yet measured on an H200.
  const bool gdn_dense = !moe && raw.contains("linear_num_value_heads");
  // Dense: up to 3 of the ~120 rows may flip on near-ties (llama_fp8 on an H200: 3, its greedy
  // margins under 0.01 in places).
  const double max_rel_l2 = gdn_moe ? 0.25 : (moe ? 0.15 : (gdn_dense ? 3e-2 : 2e-2));
  const double min_top1 = gdn_moe ? 0.8 : (moe ? 0.93 : (gdn_dense ? 0.93 : 0.97));
  ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
  for (int32_t chunk : {0, 5}) {
    int64_t rows = 0;
    double same = 0;
    for (size_t i = 0; i < f.sequences.size(); ++i) {
      const FixtureSequence& seq = f.sequences[i];
      const Tensor logits = run_sequence(runner, seq.tokens, seq.prompt_len, chunk);
      const LogitsAgreement a = agreement(logits, seq.logits);
      EXPECT_TRUE(a.finite) << name << " sequence " << i;
      EXPECT_LT(a.rel_l2, max_rel_l2) << name << " sequence " << i << " chunk " << chunk;
      rows += logits.dim(0);
      same += a.top1 * static_cast<double>(logits.dim(0));
      std::printf("[cuda fixture] %-12s seq %zu chunk %d: rel_l2 %.2e top1 %.3f\n", name.c_str(), i, chunk,
                  a.rel_l2, a.top1);
    }
    // Greedy margins of these random models are often under 0.01: a bf16 flip or two is
    // expected, so the share is over all rows of the fixture.
    EXPECT_GE(same / static_cast<double>(rows), min_top1) << name << " chunk " << chunk;
  }
}

TEST(CudaFixture, EveryRegisteredArchitectureMatchesTransformers) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA fixture tests skipped";
  const std::vector<std::string> names = registered_fixtures();
  ASSERT_FALSE(names.empty()) << "no fixtures under " << fixture_path("hf");
  for (const std::string& name : names) expect_matches_transformers(name);
}

// transformers' own bf16 error on each fixture (tests/fixtures/hf_bf16_agreement.json).
struct Bf16Yardstick {
  double rel_l2 = 0, top1 = 0;
};

std::map<std::string, Bf16Yardstick> transformers_bf16_agreement() {
  std::ifstream in(std::string(STRATA_LOCAL_FIXTURES_DIR) + "/hf_bf16_agreement.json");
  const nlohmann::json table = nlohmann::json::parse(in);  // kept alive while its items are walked
  std::map<std::string, Bf16Yardstick> out;
  for (const auto& [name, v] : table.at("fixtures").items())
    out[name] = {.rel_l2 = v.at("rel_l2").get<double>(), .top1 = v.at("top1").get<double>()};
  return out;
}

struct Bf16Bar {
  double max_rel_l2 = 0, min_top1 = 0;
};

// One draw each. An MoE fixture's excess error is its few router-flipped rows, each off by ~0.6
// rms (nemotron_h_moe on an H200: rows at 0.7, 0.4, 0.6); the flip count read off transformers'
// figure, like top-1's differing rows, gets three Poisson sigmas: of 32 comparisons none may fail by chance.
Bf16Bar no_worse_bar(const Bf16Yardstick& transformers, bool moe, int64_t rows) {
  constexpr double kDense = 2e-2, kFlippedRow = 0.6;
  const double n = static_cast<double>(rows);
  const double rounded = transformers.rel_l2 * 1.005;  // the table keeps 3 significant digits
  if (!moe) return {.max_rel_l2 = std::max(kDense, rounded), .min_top1 = std::min(0.98, transformers.top1 - 5e-4)};
  const double flips = std::max(1.0, n * (transformers.rel_l2 * transformers.rel_l2 - kDense * kDense) /
                                         (kFlippedRow * kFlippedRow));
  const double max_flips = flips + 3.0 * std::sqrt(flips);
  const double misses = std::max(1.0, (1.0 - transformers.top1) * n);
  return {.max_rel_l2 = std::max(rounded, std::sqrt(kDense * kDense + max_flips * kFlippedRow * kFlippedRow / n)),
          .min_top1 = std::min(0.98, transformers.top1 - 3.0 * std::sqrt(misses) / n)};
}

// The bar of issue 13: on every fixture transformers measured, the GPU's error over all its
// sequences (pooled as the script pools them) is no worse than transformers' own in bf16
// (with the dense 2e-2 / 98% as the floor that bf16 itself can meet), up to no_worse_bar's margin.
TEST(CudaFixture, NoWorseThanTransformersOwnBf16Error) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA fixture tests skipped";
  const std::map<std::string, Bf16Yardstick> yardsticks = transformers_bf16_agreement();
  ASSERT_GE(yardsticks.size(), 16u);
  int measured = 0;
  for (const std::string& name : registered_fixtures()) {
    const auto it = yardsticks.find(name);
    if (it == yardsticks.end()) continue;  // not measured in transformers (e.g. a checkpoint format)
    ++measured;
    Fixture f = load_fixture(name, make_cuda_backend(0));
    ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
    LogitsAgreement pooled;
    for (const FixtureSequence& seq : f.sequences) {
      const LogitsAgreement a = agreement(run_sequence(runner, seq.tokens, seq.prompt_len, 0), seq.logits);
      pooled.sum_sq_error += a.sum_sq_error, pooled.sum_sq_ref += a.sum_sq_ref;
      pooled.rows += a.rows, pooled.same += a.same;
    }
    const double rel_l2 = std::sqrt(pooled.sum_sq_error / pooled.sum_sq_ref);
    const double top1 = static_cast<double>(pooled.same) / static_cast<double>(pooled.rows);
    std::printf("[cuda vs transformers bf16] %-22s rel_l2 %.2e (transformers %.2e) top1 %.3f (%.3f)\n",
                name.c_str(), rel_l2, it->second.rel_l2, top1, it->second.top1);
    const Bf16Bar bar = no_worse_bar(it->second, has_moe_layers(f.loaded.config.raw), pooled.rows);
    EXPECT_LE(rel_l2, bar.max_rel_l2) << name;
    EXPECT_GE(top1, bar.min_top1) << name;
  }
  EXPECT_GE(measured, 12) << "fixtures under " << fixture_path("hf");
}

// config.json of Llama-3.1-8B with fewer layers, so the CPU side stays quick.
std::string reduced_config(const std::string& name, int layers) {
  const std::string dir = temp_dir() + "/" + name + "-" + std::to_string(layers) + "l";
  std::filesystem::create_directories(dir);
  const std::string source = fixture_path("configs/" + name + "/config.json");
  std::ifstream in(source);
  if (!in) throw std::runtime_error(source + " is missing: the shared fixtures' configs/ must be unpacked");
  nlohmann::json config = nlohmann::json::parse(in);
  config["num_hidden_layers"] = layers;
  write_file_atomically(dir + "/config.json", config.dump(2));
  return dir;
}

// Dummy weights of real shapes, bf16 and under --quantization fp8 (quantized on the host for
// the CPU, on the device for the GPU: the same FP8 bytes).
void expect_dummy_llama31_matches_cpu(WeightQuantization quantization) {
  auto gpu = make_cuda_backend(0);
  if (!gpu) GTEST_SKIP() << "no CUDA GPU visible: CUDA fixture tests skipped";
  const std::string dir = reduced_config("llama-3.1-8b", 2);
  auto cpu = make_cpu_backend(static_cast<int>(std::thread::hardware_concurrency()));
  const LoadOptions options{.model_path = dir, .load_format = LoadFormat::kDummy, .quantization = quantization};
  LoadedModel on_cpu = load_model(options, *cpu);
  LoadedModel on_gpu = load_model(options, *gpu);
  ModelRunner cpu_runner(*on_cpu.model, *cpu, {.num_kv_blocks = 8});
  ModelRunner gpu_runner(*on_gpu.model, *gpu, {.num_kv_blocks = 8});
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 16; ++i) tokens.push_back((i * 7919 + 101) % 128000);
  const Tensor ref = run_sequence(cpu_runner, tokens, 8, 0);
  const Tensor got = run_sequence(gpu_runner, tokens, 8, 0);
  const LogitsAgreement a = agreement(got, ref);
  std::printf("[cuda dummy llama-3.1-8b x2 layers, %s] rel_l2 %.2e top1 %.3f\n",
              quantization == WeightQuantization::kFp8 ? "fp8" : "bf16", a.rel_l2, a.top1);
  EXPECT_TRUE(a.finite);
  EXPECT_LT(a.rel_l2, 2e-2);
  EXPECT_GE(a.top1, 0.75);
}

TEST(CudaFixture, DummyLlama31MatchesCpuBackend) { expect_dummy_llama31_matches_cpu(WeightQuantization::kNone); }
TEST(CudaFixture, DummyLlama31Fp8MatchesCpuBackend) { expect_dummy_llama31_matches_cpu(WeightQuantization::kFp8); }

// Three sequences decode side by side (a bucket of 4 with one padding row): replayed CUDA
// graphs give what eager steps give, and the graph of the bucket is captured once.
TEST(CudaFixture, DecodeGraphReplayMatchesEagerSteps) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible: CUDA fixture tests skipped";
  Fixture f = load_fixture("llama", make_cuda_backend(0));
  std::vector<Tensor> results;
  for (int64_t graphs : {0, 256}) {
    ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64, .max_graph_batch_size = graphs});
    DirectSession session(runner);
    std::vector<StepInput> prompts;
    for (const FixtureSequence& seq : f.sequences)
      prompts.push_back({.seq_id = session.add_sequence(),
                         .token_ids = {seq.tokens.begin(), seq.tokens.begin() + seq.prompt_len}});
    session.step(prompts);
    const int64_t vocab = f.loaded.config.vocab_size;
    Tensor all = Tensor::host(DType::kF32, {12 * 3, vocab});
    for (int32_t i = 0; i < 12; ++i) {
      std::vector<StepInput> inputs;
      for (size_t s = 0; s < f.sequences.size(); ++s)
        inputs.push_back({.seq_id = prompts[s].seq_id, .token_ids = {f.sequences[s].tokens[f.sequences[s].prompt_len + i]}});
      const std::vector<Tensor> logits = session.step(inputs);
      for (size_t s = 0; s < logits.size(); ++s)
        std::memcpy(all.data_as<float>() + (i * 3 + s) * vocab, logits[s].data(), logits[s].nbytes());
    }
    if (graphs > 0) {
      EXPECT_EQ(runner.num_captured_graphs(), 1);
    }
    results.push_back(all);
  }
  const LogitsAgreement a = agreement(results[1], results[0]);
  EXPECT_TRUE(a.finite);
  EXPECT_LT(a.rel_l2, 1e-3);
  EXPECT_EQ(a.top1, 1.0);
}

}  // namespace
}  // namespace strata::test
