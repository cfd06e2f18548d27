// A qwen3moe GGUF file (llama.cpp's layout: experts stacked [E, rows, cols] per projection, the
// router as ffn_gate_inp) written from the qwen3_moe fixture's weights in f32: loaded through
// GgufSource it gives transformers' logits, as the safetensors checkpoint does.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "model/fixture_support.h"
#include "strata/ops/cpu/convert.h"
#include "strata/weights/safetensors_source.h"
#include "test_support.h"
#include "weights/gguf_test_writer.h"

namespace strata::test {
namespace {

constexpr float kReferenceTolerance = 2e-3f;

// HF name after "model.layers.N." -> GGUF name after "blk.N." (llama.cpp's convert_hf_to_gguf).
const std::map<std::string, std::string> kLayerNames = {
    {"self_attn.q_proj.weight", "attn_q.weight"},       {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},       {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},  {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"input_layernorm.weight", "attn_norm.weight"},     {"post_attention_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate.weight", "ffn_gate_inp.weight"},
};

std::vector<uint8_t> f32_bytes(const WeightInfo& info) {
  std::vector<uint8_t> out(static_cast<size_t>(info.shape.numel() * 4));
  cpu::widen_to_f32(info.data, info.dtype, info.shape.numel(), reinterpret_cast<float*>(out.data()));
  return out;
}

GgufTestWriter::Tensor f32_tensor(const std::string& name, const WeightInfo& info) {
  std::vector<int64_t> ne;
  for (int i = info.shape.rank - 1; i >= 0; --i) ne.push_back(info.shape[i]);
  return {name, 0, ne, f32_bytes(info)};
}

// Experts e of layer i, projection p, stacked into one [E, rows, cols] tensor.
GgufTestWriter::Tensor stacked_experts(const SafetensorsSource& src, int layer, const std::string& proj, int experts) {
  GgufTestWriter::Tensor t;
  Shape part;
  for (int e = 0; e < experts; ++e) {
    const WeightInfo* info = src.find(fmt::format("model.layers.{}.mlp.experts.{}.{}.weight", layer, e, proj));
    part = info->shape;
    const std::vector<uint8_t> bytes = f32_bytes(*info);
    t.data.insert(t.data.end(), bytes.begin(), bytes.end());
  }
  const char* gguf = proj == "gate_proj" ? "ffn_gate_exps" : proj == "up_proj" ? "ffn_up_exps" : "ffn_down_exps";
  t.name = fmt::format("blk.{}.{}.weight", layer, gguf);
  t.ne = {part[1], part[0], experts};
  return t;
}

std::string write_qwen3moe_gguf(const std::string& dir) {
  const nlohmann::json config = nlohmann::json::parse(std::ifstream(dir + "/config.json"));
  const auto src = SafetensorsSource::open(dir);
  const int layers = config["num_hidden_layers"], experts = config["num_local_experts"];
  GgufTestWriter w;
  w.add_string("general.architecture", "qwen3moe");
  w.add_u32("qwen3moe.embedding_length", config["hidden_size"]);
  w.add_u32("qwen3moe.feed_forward_length", config["intermediate_size"]);
  w.add_u32("qwen3moe.block_count", layers);
  w.add_u32("qwen3moe.attention.head_count", config["num_attention_heads"]);
  w.add_u32("qwen3moe.attention.head_count_kv", config["num_key_value_heads"]);
  w.add_u32("qwen3moe.attention.key_length", config["head_dim"]);
  w.add_u32("qwen3moe.context_length", config["max_position_embeddings"]);
  w.add_f32("qwen3moe.attention.layer_norm_rms_epsilon", config["rms_norm_eps"]);
  w.add_f32("qwen3moe.rope.freq_base", config["rope_parameters"]["rope_theta"]);
  w.add_u32("qwen3moe.vocab_size", config["vocab_size"]);
  w.add_u32("qwen3moe.expert_count", experts);
  w.add_u32("qwen3moe.expert_used_count", config["num_experts_per_tok"]);
  w.add_u32("qwen3moe.expert_feed_forward_length", config["moe_intermediate_size"]);
  w.add_tensor(f32_tensor("token_embd.weight", *src->find("model.embed_tokens.weight")));
  w.add_tensor(f32_tensor("output_norm.weight", *src->find("model.norm.weight")));
  w.add_tensor(f32_tensor("output.weight", *src->find("lm_head.weight")));
  for (int i = 0; i < layers; ++i) {
    for (const auto& [hf, gguf] : kLayerNames)
      w.add_tensor(f32_tensor(fmt::format("blk.{}.{}", i, gguf), *src->find(fmt::format("model.layers.{}.{}", i, hf))));
    for (const char* proj : {"gate_proj", "up_proj", "down_proj"}) w.add_tensor(stacked_experts(*src, i, proj, experts));
  }
  return GgufTestWriter::write_file(temp_dir() + "/" + per_test_name("qwen3moe.gguf"), w.bytes());
}

TEST(GgufQwen3Moe, StackedExpertsLoadAndMatchTransformers) {
  const Fixture reference = load_fixture("qwen3_moe");
  const std::string path = write_qwen3moe_gguf(fixture_path("hf/qwen3_moe"));
  auto backend = make_cpu_backend(2);
  const LoadedModel loaded = load_model({.model_path = path}, *backend);
  EXPECT_EQ(loaded.config.model_type, "qwen3_moe");
  ModelRunner runner(*loaded.model, *backend, {});
  for (size_t i = 0; i < reference.sequences.size(); ++i) {
    const FixtureSequence& seq = reference.sequences[i];
    const Tensor logits = run_sequence(runner, seq.tokens, seq.prompt_len, 0);
    EXPECT_LT(max_abs_diff_rows(logits, seq.logits, 0, seq.tokens.size()), kReferenceTolerance) << "sequence " << i;
  }
}

}  // namespace
}  // namespace strata::test
