#include "model/fixture_support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "strata/weights/safetensors.h"
#include "test_support.h"

namespace strata::test {

Fixture load_fixture(const std::string& name, std::unique_ptr<Backend> backend) {
  Fixture f;
  f.backend = backend ? std::move(backend) : make_cpu_backend(2);
  const std::string dir = fixture_path("hf/" + name);
  f.loaded = load_model({.model_path = dir}, *f.backend);
  std::ifstream in(dir + "/reference.json");
  const nlohmann::json ref = nlohmann::json::parse(in);
  SafetensorsFile tensors(dir + "/reference.safetensors");
  for (size_t i = 0; i < ref["sequences"].size(); ++i) {
    FixtureSequence seq;
    seq.prompt_len = ref["sequences"][i]["prompt_len"].get<int32_t>();
    const WeightInfo* tokens = tensors.find("tokens_" + std::to_string(i));
    const WeightInfo* logits = tensors.find("logits_" + std::to_string(i));
    for (int64_t j = 0; j < tokens->shape.numel(); ++j)
      seq.tokens.push_back(static_cast<int32_t>(static_cast<const int64_t*>(tokens->data)[j]));
    seq.logits = Tensor::host(DType::kF32, logits->shape);
    std::memcpy(seq.logits.data(), logits->data, seq.logits.nbytes());
    f.sequences.push_back(std::move(seq));
  }
  return f;
}

Tensor run_sequence(ModelRunner& runner, const std::vector<int32_t>& tokens, int32_t prefill_len,
                    int32_t chunk, std::shared_ptr<const MultimodalPrompt> images) {
  DirectSession session(runner);
  const int64_t id = session.add_sequence(std::move(images));
  const int64_t vocab = runner.model().config().vocab_size;
  Tensor out = Tensor::host(DType::kF32, {static_cast<int64_t>(tokens.size()), vocab});
  int32_t done = 0;
  while (done < static_cast<int32_t>(tokens.size())) {
    int32_t n = done < prefill_len ? prefill_len - done : 1;
    if (done < prefill_len && chunk > 0) n = std::min(n, chunk);
    StepInput input{.seq_id = id,
                    .token_ids = {tokens.begin() + done, tokens.begin() + done + n},
                    .logits = LogitsMode::kAll};
    const Tensor logits = session.step({input})[0];
    std::memcpy(out.data_as<float>() + done * vocab, logits.data(), logits.nbytes());
    done += n;
  }
  return out;
}

float max_abs_diff_rows(const Tensor& a, const Tensor& b, int64_t begin, int64_t end) {
  const int64_t vocab = a.dim(1);
  float m = 0;
  for (int64_t i = begin * vocab; i < end * vocab; ++i) {
    const float d = std::fabs(a.data_as<float>()[i] - b.data_as<float>()[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

bool has_moe_layers(const nlohmann::json& raw) {
  if (raw.contains("num_experts") || raw.contains("num_local_experts")) return true;
  const std::string type = raw.value("model_type", "");
  if (type == "deepseek_v3" || type == "deepseek_v4") return raw.value("n_routed_experts", 0) > 0;
  // Nemotron-H configs carry n_routed_experts even without MoE blocks: the pattern decides.
  const nlohmann::json types = raw.value("layers_block_type", nlohmann::json::array());
  return std::find(types.begin(), types.end(), "moe") != types.end() ||
         raw.value("hybrid_override_pattern", std::string()).find('E') != std::string::npos;
}

LoadOptions changed_fixture(const std::string& fixture, const std::string& name, const nlohmann::json& changes) {
  const std::string dir = make_dir_once(temp_dir() + "/" + name, [&](const std::string& out) {
    std::ifstream in(fixture_path("hf/" + fixture + "/config.json"));
    nlohmann::json config = nlohmann::json::parse(in);
    config.merge_patch(changes);
    std::ofstream(out + "/config.json") << config.dump();
  });
  return {.model_path = dir, .load_format = LoadFormat::kDummy};
}

}  // namespace strata::test
