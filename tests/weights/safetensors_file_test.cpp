#include <gtest/gtest.h>

#include <cstring>

#include "strata/core/model_config.h"
#include "strata/weights/safetensors.h"
#include "strata/weights/safetensors_source.h"
#include "strata/weights/safetensors_writer.h"
#include "strata/weights/weight_loader.h"
#include "weights_test_util.h"

namespace strata {
namespace {

using test::test_dir;

Tensor iota_tensor(DType dtype, Shape shape, int seed) {
  Tensor t = Tensor::host(dtype, shape);
  auto* bytes = t.data_as<uint8_t>();
  for (int64_t i = 0; i < t.nbytes(); ++i) bytes[i] = static_cast<uint8_t>(i * 31 + seed);
  return t;
}

void expect_same_bytes(const WeightInfo& info, const Tensor& tensor) {
  EXPECT_EQ(info.dtype, tensor.dtype()) << info.name;
  EXPECT_EQ(info.shape, tensor.shape()) << info.name;
  ASSERT_NE(info.data, nullptr);
  EXPECT_EQ(std::memcmp(info.data, tensor.data(), tensor.nbytes()), 0) << info.name;
}

TEST(SafetensorsFile, WriterRoundTripsEveryDTypeExactly) {
  const std::string path = test_dir() + "/all.safetensors";
  const std::vector<std::pair<std::string, Tensor>> tensors = {
      {"w.f32", test::random_f32({3, 5}, 1)},
      {"w.bf16", test::random_bf16({4, 2, 3}, 2)},
      {"w.f16", iota_tensor(DType::kF16, {7}, 3)},
      {"w.i32", iota_tensor(DType::kI32, {2, 2}, 4)},
      {"w.i64", iota_tensor(DType::kI64, {3}, 5)},
      {"w.i8", iota_tensor(DType::kI8, {5}, 6)},
      {"w.u8", iota_tensor(DType::kU8, {1, 1, 1, 9}, 7)},
      {"w.empty", Tensor::host(DType::kF32, {0, 4})},
      {"w.scalar", iota_tensor(DType::kF32, Shape{}, 8)},
  };
  write_safetensors(path, tensors, {{"format", "pt"}, {"note", "strata"}});

  const SafetensorsFile file(path);
  ASSERT_EQ(file.tensors().size(), tensors.size());
  for (const auto& [name, tensor] : tensors) {
    const WeightInfo* info = file.find(name);
    ASSERT_NE(info, nullptr) << name;
    EXPECT_EQ(info->file, path);
    expect_same_bytes(*info, tensor);
  }
  EXPECT_EQ(file.find("w.missing"), nullptr);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "strata"}};
  EXPECT_EQ(file.metadata(), metadata);

  // Header padded to 8 bytes, tensors back to back in the order given.
  const std::string bytes = test::read_bytes(path);
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, bytes.data(), 8);
  EXPECT_EQ(header_bytes % 8, 0u);
  EXPECT_EQ(bytes.back(), static_cast<char>(tensors[8].second.data_as<uint8_t>()[3]));
  int64_t total = 0;
  for (const auto& [name, tensor] : tensors) total += tensor.nbytes();
  EXPECT_EQ(static_cast<int64_t>(bytes.size()), 8 + static_cast<int64_t>(header_bytes) + total);
  EXPECT_EQ(static_cast<const uint8_t*>(file.find("w.bf16")->data) -
                static_cast<const uint8_t*>(file.find("w.f32")->data),
            15 * 4);
}

TEST(SafetensorsFile, WriterRejectsBadInput) {
  const std::string dir = test_dir();
  const Tensor t = test::random_f32({2}, 1);
  test::expect_error([&] { write_safetensors(dir + "/a.safetensors", {{"x", t}, {"x", t}}); },
                     {"a.safetensors", "'x'", "twice"});
  test::expect_error([&] { write_safetensors(dir + "/b.safetensors", {{"__metadata__", t}}); },
                     {"b.safetensors", "__metadata__"});
  test::expect_error(
      [&] { write_safetensors(dir + "/c.safetensors", {{"q", Tensor::host(DType::kQ4_0, {32})}}); },
      {"c.safetensors", "'q'", "q4_0"});
  test::expect_error([&] { write_safetensors(dir + "/no/such/dir/d.safetensors", {{"x", t}}); },
                     {"no/such/dir/d.safetensors"});
  EXPECT_FALSE(std::filesystem::exists(dir + "/a.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/c.safetensors.tmp"));
}

TEST(SafetensorsFile, QwenFixtureMatchesConfig) {
  const std::string dir = test::fixture_path("hf/qwen3");
  const ModelConfig config = ModelConfig::from_file(dir + "/config.json");
  const auto source = SafetensorsSource::open(dir);
  EXPECT_EQ(source->description(), dir + "/model.safetensors");
  ASSERT_EQ(source->num_files(), 1);
  EXPECT_EQ(source->file(0).metadata().at("format"), "pt");

  const int64_t hidden = config.hidden_size, head_dim = config.head_dim;
  const int64_t q_dim = config.num_attention_heads * head_dim;
  const int64_t kv_dim = config.num_key_value_heads * head_dim;
  const int64_t inter = config.intermediate_size;
  const WeightLoader weights(*source);
  EXPECT_EQ(weights.require("model.embed_tokens.weight", {config.vocab_size, hidden}).dtype,
            DType::kBF16);
  weights.require("model.norm.weight", {hidden});
  EXPECT_EQ(weights.optional("lm_head.weight", {config.vocab_size, hidden}), nullptr);
  for (int64_t i = 0; i < config.num_hidden_layers; ++i) {
    const WeightLoader layer = weights.scope(fmt::format("model.layers.{}", i));
    layer.require("input_layernorm.weight", {hidden});
    layer.require("post_attention_layernorm.weight", {hidden});
    layer.require("self_attn.q_proj.weight", {q_dim, hidden});
    layer.require("self_attn.k_proj.weight", {kv_dim, hidden});
    layer.require("self_attn.v_proj.weight", {kv_dim, hidden});
    layer.require("self_attn.o_proj.weight", {hidden, q_dim});
    layer.require("self_attn.q_norm.weight", {head_dim});
    layer.require("self_attn.k_norm.weight", {head_dim});
    layer.require("mlp.gate_proj.weight", {inter, hidden});
    layer.require("mlp.up_proj.weight", {inter, hidden});
    layer.require("mlp.down_proj.weight", {hidden, inter});
  }
  EXPECT_EQ(source->names().size(), 2 + 11 * static_cast<size_t>(config.num_hidden_layers));

  // Values as Python's safetensors reads them.
  const auto* q = static_cast<const uint16_t*>(
      source->find("model.layers.0.self_attn.q_proj.weight")->data);
  EXPECT_EQ(q[0], 0x3c03);
  EXPECT_EQ(q[3], 0xbe10);
  const auto* norm = static_cast<const uint16_t*>(source->find("model.norm.weight")->data);
  EXPECT_EQ(norm[0], 0x3f8e);
  EXPECT_EQ(norm[3], 0x3f5d);
}

TEST(SafetensorsFile, BoolReadsAsU8) {
  const std::string path = test_dir() + "/bool.safetensors";
  const std::string header = R"({"mask":{"dtype":"BOOL","shape":[2,3],"data_offsets":[0,6]}})";
  test::write_bytes(path, test::raw_safetensors(header, 6));
  const SafetensorsFile file(path);
  EXPECT_EQ(file.find("mask")->dtype, DType::kU8);
  EXPECT_EQ(file.find("mask")->shape, Shape({2, 3}));
  EXPECT_TRUE(file.metadata().empty());
}

}  // namespace
}  // namespace strata
