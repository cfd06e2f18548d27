// LoRA adapters through the CUDA backend against transformers + peft (relative L2 over each
// adapter's three sequences; bf16 weights, activations and adapters). Skipped without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "lora/lora_test_support.h"
#include "model/fixture_support.h"
#include "strata/model/model_loader.h"
#include "strata/lora/lora_set.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {
namespace {

// Sums of squared error and of squared reference, so the sequences of an adapter pool.
void add_error(const Tensor& got, const WeightInfo& want, double& num, double& den) {
  const float* w = static_cast<const float*>(want.data);
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = static_cast<double>(got.data_as<float>()[i]) - w[i];
    num += d * d;
    den += static_cast<double>(w[i]) * w[i];
  }
}

// transformers + peft's own bf16 error on base/adapter, pooled over the three sequences
// (tests/fixtures/hf_bf16_agreement.json, written by scripts/fixtures/hf_bf16_agreement.py).
double transformers_bf16_rel_l2(const std::string& base, const std::string& adapter) {
  std::ifstream in(std::string(STRATA_LOCAL_FIXTURES_DIR) + "/hf_bf16_agreement.json");
  const nlohmann::json table = nlohmann::json::parse(in);
  return table.at("lora").at(base + "/" + adapter).at("rel_l2").get<double>();
}

// The dense 3e-2, or transformers' own bf16 error where that is larger: llama's all_r8 (random,
// scaled-up A and B on every projection, no qk norm) amplifies bf16 rounding to ~0.1-0.3 per
// sequence in transformers + peft too.
TEST(CudaLora, AdaptersMatchTransformersPeft) {
  if (!make_cuda_backend(0)) GTEST_SKIP() << "no CUDA GPU visible";
  for (const std::string base : {"llama", "qwen3"}) {
    Fixture f = load_fixture(base, make_cuda_backend(0));
    f.loaded = load_model({.model_path = f32_config_copy(base)}, *f.backend);
    std::vector<LoraAdapter> adapters;
    for (const char* name : {"all_r8", "attn_r4"})
      adapters.push_back(load_lora_adapter(name, fixture_path("lora/" + base + "/adapter_" + name)));
    const LoraSet lora(adapters, f.loaded.config, *f.backend);
    ModelRunner runner(*f.loaded.model, *f.backend, {.num_kv_blocks = 64});
    runner.set_lora(&lora);
    const SafetensorsFile reference(fixture_path("lora/" + base + "/reference.safetensors"));
    for (int32_t slot = 0; slot < 2; ++slot) {
      double num = 0, den = 0;
      for (size_t i = 0; i < f.sequences.size(); ++i) {
        DirectSession session(runner);
        const int64_t id = session.add_sequence();
        const Tensor logits = session.step({{.seq_id = id, .token_ids = f.sequences[i].tokens,
                                             .logits = LogitsMode::kAll, .lora_slot = slot}})[0];
        add_error(logits, *reference.find("logits_" + adapters[slot].name + "_" + std::to_string(i)), num, den);
      }
      const double rel_l2 = std::sqrt(num / den);
      const double yardstick = transformers_bf16_rel_l2(base, adapters[slot].name);
      std::printf("[cuda lora] %s %s rel_l2 %.2e (transformers + peft bf16 %.2e)\n", base.c_str(),
                  adapters[slot].name.c_str(), rel_l2, yardstick);
      EXPECT_LE(rel_l2, std::max(3e-2, yardstick)) << base << " " << adapters[slot].name;
    }
  }
}

}  // namespace
}  // namespace strata::test
