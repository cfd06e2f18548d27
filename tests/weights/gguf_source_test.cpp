// GgufSource and gguf_to_hf_config on tiny llama / qwen2 / qwen3 GGUF files written by the
// test writer, and on the real SmolLM2 file when present.
#include "strata/weights/gguf_source.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "strata/core/error.h"
#include "strata/core/model_config.h"
#include "strata/weights/dequantize.h"
#include "test_support.h"
#include "weights/gguf_test_writer.h"

namespace strata {
namespace {

using test::GgufTestWriter;

// f32 [rows, cols] tensor whose row r holds the value r everywhere.
GgufTestWriter::Tensor row_index_f32(const std::string& name, int64_t rows, int64_t cols) {
  std::vector<uint8_t> data(rows * cols * 4);
  for (int64_t r = 0; r < rows; ++r) {
    const float v = static_cast<float>(r);
    for (int64_t c = 0; c < cols; ++c) std::memcpy(&data[(r * cols + c) * 4], &v, 4);
  }
  return {name, 0, {cols, rows}, data};
}

// Q8_0 [rows, 32]: one block per row, d = 1 and first quant = r.
GgufTestWriter::Tensor row_index_q8(const std::string& name, int64_t rows) {
  std::vector<uint8_t> data(rows * 34, 0);
  for (int64_t r = 0; r < rows; ++r) {
    data[r * 34 + 1] = 0x3c;
    data[r * 34 + 2] = static_cast<uint8_t>(r);
  }
  return {name, 8, {32, rows}, data};
}

// hidden 32, 2 query heads and 1 kv head of 16.
GgufTestWriter tiny_model(const std::string& arch) {
  GgufTestWriter w;
  w.add_string("general.architecture", arch);
  w.add_u32(arch + ".embedding_length", 32);
  w.add_u32(arch + ".feed_forward_length", 64);
  w.add_u32(arch + ".block_count", 1);
  w.add_u32(arch + ".attention.head_count", 2);
  w.add_u32(arch + ".attention.head_count_kv", 1);
  w.add_u32(arch + ".context_length", 2048);
  w.add_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-6f);
  w.add_f32(arch + ".rope.freq_base", 1000000.f);
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  w.add_string_array("tokenizer.ggml.tokens", {"a", "b", "c", "d"});
  w.add_tensor(row_index_f32("token_embd.weight", 4, 32));
  w.add_tensor(row_index_f32("blk.0.attn_q.weight", 32, 32));
  w.add_tensor(row_index_q8("blk.0.attn_k.weight", 16));
  w.add_tensor(row_index_f32("blk.0.attn_v.weight", 16, 32));
  w.add_tensor(row_index_f32("blk.0.attn_norm.weight", 1, 32));
  w.add_tensor(row_index_f32("output_norm.weight", 1, 32));
  w.add_tensor(row_index_f32("rope_freqs.weight", 1, 8));
  return w;
}

std::string write(const std::string& name, const GgufTestWriter& w) {
  return GgufTestWriter::write_file(test::temp_dir() + "/" + test::per_test_name(name), w.bytes());
}

TEST(GgufSourceTest, MapsNames) {
  EXPECT_EQ(gguf_to_hf_name("token_embd.weight"), "model.embed_tokens.weight");
  EXPECT_EQ(gguf_to_hf_name("output.weight"), "lm_head.weight");
  EXPECT_EQ(gguf_to_hf_name("output_norm.weight"), "model.norm.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.12.attn_output.weight"), "model.layers.12.self_attn.o_proj.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.0.attn_q.bias"), "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(gguf_to_hf_name("blk.3.attn_k_norm.weight"), "model.layers.3.self_attn.k_norm.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.3.ffn_norm.weight"), "model.layers.3.post_attention_layernorm.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.3.attn_norm.weight"), "model.layers.3.input_layernorm.weight");
  EXPECT_EQ(gguf_to_hf_name("blk.7.ffn_down.weight"), "model.layers.7.mlp.down_proj.weight");
  EXPECT_EQ(gguf_to_hf_name("rope_freqs.weight"), std::nullopt);
  EXPECT_EQ(gguf_to_hf_name("blk.x.attn_q.weight"), std::nullopt);
  EXPECT_EQ(gguf_to_hf_name("blk.1.attn_q"), std::nullopt);
}

TEST(GgufSourceTest, LlamaQkRowsAreUnpermuted) {
  GgufSource source(write("llama.gguf", tiny_model("llama")));
  const WeightInfo* q = source.find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->shape, Shape({32, 32}));
  // HF row h*16 + half*8 + i comes from GGUF row h*16 + 2*i + half.
  const int expected_q[32] = {0,  2,  4,  6,  8,  10, 12, 14, 1,  3,  5,  7,  9,  11, 13, 15,
                              16, 18, 20, 22, 24, 26, 28, 30, 17, 19, 21, 23, 25, 27, 29, 31};
  for (int r = 0; r < 32; ++r) {
    EXPECT_EQ(static_cast<const float*>(q->data)[r * 32 + 5], expected_q[r]) << r;
  }
  const WeightInfo* k = source.find("model.layers.0.self_attn.k_proj.weight");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->dtype, DType::kQ8_0);
  const int expected_k[16] = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
  for (int r = 0; r < 16; ++r) {
    float row[32];
    dequantize_row(DType::kQ8_0, static_cast<const uint8_t*>(k->data) + r * 34, row, 32);
    EXPECT_EQ(row[0], expected_k[r]) << r;
  }
  const WeightInfo* v = source.find("model.layers.0.self_attn.v_proj.weight");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(static_cast<const float*>(v->data)[3 * 32], 3.f);  // v is not permuted
  EXPECT_EQ(source.find("rope_freqs.weight"), nullptr);
  EXPECT_EQ(source.unmapped(), std::vector<std::string>{"rope_freqs.weight"});
  EXPECT_EQ(source.names().size(), 6u);
}

TEST(GgufSourceTest, QwenTensorsKeepTheirOrderAndBiases) {
  GgufTestWriter w = tiny_model("qwen2");
  w.add_tensor(row_index_f32("blk.0.attn_q.bias", 1, 32));
  w.add_tensor(row_index_f32("output.weight", 4, 32));
  GgufSource source(write("qwen2.gguf", w));
  const WeightInfo* q = source.find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  for (int r = 0; r < 32; ++r) EXPECT_EQ(static_cast<const float*>(q->data)[r * 32], r);
  EXPECT_NE(source.find("model.layers.0.self_attn.q_proj.bias"), nullptr);
  EXPECT_NE(source.find("lm_head.weight"), nullptr);
  const nlohmann::json config = gguf_to_hf_config(source.file());
  EXPECT_EQ(config["attention_bias"], true);
  EXPECT_EQ(config["tie_word_embeddings"], false);
  EXPECT_EQ(config["architectures"][0], "Qwen2ForCausalLM");
}

TEST(GgufSourceTest, ConfigFromMetadata) {
  GgufTestWriter w = tiny_model("qwen3");
  w.add_u32("qwen3.attention.key_length", 128);
  GgufFile file(write("qwen3.gguf", w));
  const nlohmann::json c = gguf_to_hf_config(file);
  EXPECT_EQ(c["model_type"], "qwen3");
  EXPECT_EQ(c["vocab_size"], 4);  // from tokenizer.ggml.tokens
  EXPECT_EQ(c["hidden_size"], 32);
  EXPECT_EQ(c["intermediate_size"], 64);
  EXPECT_EQ(c["num_hidden_layers"], 1);
  EXPECT_EQ(c["num_attention_heads"], 2);
  EXPECT_EQ(c["num_key_value_heads"], 1);
  EXPECT_EQ(c["head_dim"], 128);
  EXPECT_EQ(c["rms_norm_eps"], 1e-6);  // the f32 9.99999997e-07 printed as config.json has it
  EXPECT_EQ(c["rope_theta"], 1000000.0);
  EXPECT_EQ(c["max_position_embeddings"], 2048);
  EXPECT_EQ(c["tie_word_embeddings"], true);
  EXPECT_EQ(c["attention_bias"], false);
  EXPECT_EQ(c["bos_token_id"], 1);
  EXPECT_EQ(c["eos_token_id"], 2);
  const ModelConfig config = ModelConfig::from_json(c);
  EXPECT_EQ(config.head_dim, 128);
  EXPECT_EQ(config.eos_token_ids, std::vector<int64_t>{2});
}

TEST(GgufSourceTest, Errors) {
  GgufTestWriter gpt2;
  gpt2.add_string("general.architecture", "gpt2");
  const std::string path = write("gpt2.gguf", gpt2);
  try {
    GgufSource source(path);
    ADD_FAILURE() << "gpt2 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("architecture 'gpt2' is not supported"), std::string::npos) << e.what();
  }
  GgufTestWriter no_layers;
  no_layers.add_string("general.architecture", "llama");
  no_layers.add_u32("llama.embedding_length", 8);
  no_layers.add_u32("llama.attention.head_count", 2);
  GgufFile file(write("nolayers.gguf", no_layers));
  try {
    gguf_to_hf_config(file);
    ADD_FAILURE() << "missing keys accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'llama.feed_forward_length' is missing"), std::string::npos) << e.what();
  }
  GgufTestWriter odd = tiny_model("llama");
  odd.add_u32("llama.attention.head_count", 3);  // duplicate key: also an error
  EXPECT_THROW(GgufSource(write("odd.gguf", odd)), Error);
}

TEST(GgufSourceTest, RealSmolLm2) {
  const char* home = std::getenv("HOME");
  const std::string path = std::string(home ? home : "") + "/.cache/strata/models/smollm2-135m-instruct-q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  GgufSource source(path);
  EXPECT_EQ(source.names().size(), 272u);
  EXPECT_TRUE(source.unmapped().empty());
  const nlohmann::json c = gguf_to_hf_config(source.file());
  EXPECT_EQ(c["vocab_size"], 49152);
  EXPECT_EQ(c["hidden_size"], 576);
  EXPECT_EQ(c["intermediate_size"], 1536);
  EXPECT_EQ(c["num_hidden_layers"], 30);
  EXPECT_EQ(c["num_attention_heads"], 9);
  EXPECT_EQ(c["num_key_value_heads"], 3);
  EXPECT_EQ(c["head_dim"], 64);
  EXPECT_EQ(c["rms_norm_eps"], 1e-5);
  EXPECT_EQ(c["rope_theta"], 100000.0);
  EXPECT_EQ(c["max_position_embeddings"], 8192);
  EXPECT_EQ(c["tie_word_embeddings"], true);
  EXPECT_EQ(c["bos_token_id"], 1);
  const WeightInfo* q = source.find("model.layers.0.self_attn.q_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::kQ4_1);
  // GGUF row 5 (head 0, i = 2, second half) is HF row 32 + 2; values from the gguf
  // Python package's dequantize() of the raw GGUF row.
  std::vector<float> row(576);
  dequantize_row(DType::kQ4_1, static_cast<const uint8_t*>(q->data) + 34 * 360, row.data(), 576);
  EXPECT_EQ(row[0], 0x1.38p-4f);
  EXPECT_EQ(row[1], -0x1.194p-2f);
  EXPECT_EQ(row[3], 0x1.ca2p-1f);
}

}  // namespace
}  // namespace strata
