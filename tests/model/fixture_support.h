// Running the HF fixtures of ../shared/fixtures/hf through a DirectSession and comparing
// with the logits transformers computed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/engine/direct_session.h"
#include "strata/model/model_loader.h"

namespace strata::test {

struct FixtureSequence {
  std::vector<int32_t> tokens;  // prompt then the greedy continuation
  int32_t prompt_len = 0;
  Tensor logits;                // [tokens.size(), vocab] f32 from transformers
};

struct Fixture {
  std::unique_ptr<Backend> backend;
  LoadedModel loaded;
  std::vector<FixtureSequence> sequences;
};

// On `backend` (the CPU backend with 2 threads when null).
Fixture load_fixture(const std::string& name, std::unique_ptr<Backend> backend = nullptr);

// Prefill the first `prefill_len` tokens in chunks of `chunk` (0: one chunk), then decode
// the rest one token at a time. Returns the logits of every position [len, vocab]. `images`:
// the prompt's images (multimodal fixtures), null for text.
Tensor run_sequence(ModelRunner& runner, const std::vector<int32_t>& tokens, int32_t prefill_len,
                    int32_t chunk, std::shared_ptr<const MultimodalPrompt> images = nullptr);

// A sequence run over split ranks: tokens, of which `prefill` are prefilled in chunks of `chunk`.
struct SplitRun {
  std::vector<int32_t> tokens;
  int32_t prefill = 0;
  int32_t chunk = 0;
};

// Rows [begin, end) of a [N, V] tensor, max |a - b|.
float max_abs_diff_rows(const Tensor& a, const Tensor& b, int64_t begin, int64_t end);

// Whether the config has routed-expert (MoE) layers, for any architecture the fixtures cover.
bool has_moe_layers(const nlohmann::json& raw);

// A fixture's config with `changes` merged over it, dummy weights, in a scratch folder `name`.
LoadOptions changed_fixture(const std::string& fixture, const std::string& name, const nlohmann::json& changes);

}  // namespace strata::test
