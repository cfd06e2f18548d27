// LoRA adapters through the CUDA backend against transformers + peft, at the CUDA fixture
// test's dense tolerance (relative L2; bf16 weights, activations and adapters). Skipped
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "lora/lora_test_support.h"
#include "model/fixture_support.h"
#include "strata/model/model_loader.h"
#include "strata/lora/lora_set.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {
namespace {

double rel_l2(const Tensor& got, const WeightInfo& want) {
  double num = 0, den = 0;
  const float* w = static_cast<const float*>(want.data);
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double d = static_cast<double>(got.data_as<float>()[i]) - w[i];
    num += d * d;
    den += static_cast<double>(w[i]) * w[i];
  }
  return std::sqrt(num / den);
}

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
    for (int32_t slot = 0; slot < 2; ++slot)
      for (size_t i = 0; i < f.sequences.size(); ++i) {
        DirectSession session(runner);
        const int64_t id = session.add_sequence();
        const Tensor logits = session.step({{.seq_id = id, .token_ids = f.sequences[i].tokens,
                                             .logits = LogitsMode::kAll, .lora_slot = slot}})[0];
        const WeightInfo* want = reference.find("logits_" + adapters[slot].name + "_" + std::to_string(i));
        EXPECT_LT(rel_l2(logits, *want), 3e-2) << base << " " << adapters[slot].name << " sequence " << i;
      }
  }
}

}  // namespace
}  // namespace strata::test
