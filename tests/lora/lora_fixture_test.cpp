// LoRA adapters (PEFT, ../shared/fixtures/lora) on the llama and qwen3 fixtures against
// transformers + peft logits: a whole sequence in one step, and a prompt prefilled then
// decoded token by token; a step mixing the base model and both adapters equals each row
// alone. On the CPU, and on the GPU (bf16 tolerance) when one is visible.
#include <gtest/gtest.h>

#include <cstring>

#include "lora/lora_test_support.h"
#include "model/fixture_support.h"
#include "strata/core/error.h"
#include "strata/engine/direct_session.h"
#include "strata/lora/lora_set.h"
#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {
namespace {

const char* kAdapters[] = {"all_r8", "attn_r4"};

// Logits of every position of `tokens`, prefilled up to prefill_len then decoded one by one.
Tensor run_with_adapter(ModelRunner& runner, const std::vector<int32_t>& tokens, int32_t prefill_len, int32_t slot) {
  DirectSession session(runner);
  const int64_t id = session.add_sequence();
  const int64_t vocab = runner.model().config().vocab_size;
  Tensor all = Tensor::host(DType::kF32, {static_cast<int64_t>(tokens.size()), vocab});
  const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + prefill_len);
  Tensor rows = session.step({{.seq_id = id, .token_ids = prompt, .logits = LogitsMode::kAll, .lora_slot = slot}})[0];
  std::memcpy(all.data(), rows.data(), rows.nbytes());
  for (size_t p = prefill_len; p < tokens.size(); ++p) {
    rows = session.step({{.seq_id = id, .token_ids = {tokens[p]}, .lora_slot = slot}})[0];
    std::memcpy(all.data_as<float>() + p * vocab, rows.data(), rows.nbytes());
  }
  return all;
}

class LoraFixture : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    f_ = load_fixture(GetParam());
    f_.loaded = load_model({.model_path = f32_config_copy(GetParam())}, *f_.backend);
    std::vector<LoraAdapter> adapters;
    for (const char* name : kAdapters)
      adapters.push_back(load_lora_adapter(name, fixture_path("lora/" + GetParam() + "/adapter_" + name)));
    lora_ = std::make_unique<LoraSet>(adapters, f_.loaded.config, *f_.backend);
    reference_ = std::make_unique<SafetensorsFile>(fixture_path("lora/" + GetParam() + "/reference.safetensors"));
  }
  Tensor reference(const std::string& adapter, size_t i) const {
    const WeightInfo* info = reference_->find("logits_" + adapter + "_" + std::to_string(i));
    return Tensor::view(const_cast<void*>(info->data), DType::kF32, info->shape);
  }

  Fixture f_;
  std::unique_ptr<LoraSet> lora_;
  std::unique_ptr<SafetensorsFile> reference_;
};

TEST_P(LoraFixture, EachAdapterMatchesTransformersPeft) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  runner.set_lora(lora_.get());
  for (int32_t slot = 0; slot < 2; ++slot)
    for (size_t i = 0; i < f_.sequences.size(); ++i) {
      const FixtureSequence& seq = f_.sequences[i];
      const int32_t n = static_cast<int32_t>(seq.tokens.size());
      const Tensor want = reference(kAdapters[slot], i);
      EXPECT_LT(max_abs_diff_rows(run_with_adapter(runner, seq.tokens, n, slot), want, 0, n), 2e-3f)
          << kAdapters[slot] << " sequence " << i << " whole";
      EXPECT_LT(max_abs_diff_rows(run_with_adapter(runner, seq.tokens, seq.prompt_len, slot), want, 0, n), 2e-3f)
          << kAdapters[slot] << " sequence " << i << " decoded";
    }
  // The adapters move the logits (by up to ~4, reference.json): the base model must not match.
  EXPECT_GT(max_abs_diff_rows(f_.sequences[0].logits, reference(kAdapters[1], 0), 0, f_.sequences[0].tokens.size()),
            0.1f);
}

TEST_P(LoraFixture, OneStepMixingBaseAndAdaptersEqualsEachAlone) {
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  runner.set_lora(lora_.get());
  DirectSession session(runner);
  std::vector<StepInput> inputs;
  for (int32_t slot : {-1, 0, 1}) {
    const FixtureSequence& seq = f_.sequences[slot + 1];
    inputs.push_back({.seq_id = session.add_sequence(), .token_ids = seq.tokens, .logits = LogitsMode::kAll,
                      .lora_slot = slot});
  }
  const std::vector<Tensor> mixed = session.step(inputs);
  for (size_t r = 0; r < inputs.size(); ++r) {
    const int32_t n = static_cast<int32_t>(inputs[r].token_ids.size());
    const Tensor alone = run_with_adapter(runner, inputs[r].token_ids, n, inputs[r].lora_slot);
    EXPECT_LT(max_abs_diff_rows(mixed[r], alone, 0, n), 1e-4f) << "row " << r;
  }
}

// Slots made empty and filled later (the Python module's enable_lora): one slot takes each adapter
// in turn, and attn_r4 loaded over all_r8 leaves nothing of all_r8's other projections.
TEST_P(LoraFixture, OneSlotReloadedMatchesTransformersPeft) {
  LoraSet one_slot({.max_loras = 1, .max_lora_rank = 8}, f_.loaded.config, *f_.backend);
  ModelRunner runner(*f_.loaded.model, *f_.backend, {.num_kv_blocks = 64});
  runner.set_lora(&one_slot);
  for (int adapter : {0, 1, 0, 1}) {
    one_slot.load(0, load_lora_adapter(kAdapters[adapter],
                                       fixture_path("lora/" + GetParam() + "/adapter_" + kAdapters[adapter])));
    EXPECT_EQ(one_slot.slot(kAdapters[adapter]), 0);
    const FixtureSequence& seq = f_.sequences[0];
    const int32_t n = static_cast<int32_t>(seq.tokens.size());
    EXPECT_LT(max_abs_diff_rows(run_with_adapter(runner, seq.tokens, seq.prompt_len, 0), reference(kAdapters[adapter], 0),
                                0, n), 2e-3f) << kAdapters[adapter];
  }
}

TEST_P(LoraFixture, LoadRefusesARankOverTheSlots) {
  LoraSet narrow({.max_loras = 1, .max_lora_rank = 4}, f_.loaded.config, *f_.backend);
  const LoraAdapter r8 = load_lora_adapter("all_r8", fixture_path("lora/" + GetParam() + "/adapter_all_r8"));
  try {
    narrow.load(0, r8);
    ADD_FAILURE() << "a rank-8 adapter loaded into rank-4 slots";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 8, more than max_lora_rank 4"), std::string::npos) << e.what();
  }
  EXPECT_EQ(narrow.slot("all_r8"), -1);
}

INSTANTIATE_TEST_SUITE_P(Bases, LoraFixture, ::testing::Values("llama", "qwen3"));

}  // namespace
}  // namespace strata::test
