#include <gtest/gtest.h>

#include <cstring>

#include "strata/weights/safetensors_source.h"
#include "strata/weights/safetensors_writer.h"
#include "weights_test_util.h"

namespace strata {
namespace {

using test::expect_error;

constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

struct ShardedModel {
  std::string dir;
  Tensor embed, norm, up;  // f32 [6, 4], bf16 [4], f32 [8, 4]
};

ShardedModel write_sharded(const std::string& index_json) {
  ShardedModel m{test::test_dir(), test::random_f32({6, 4}, 1), test::random_bf16({4}, 2),
                 test::random_f32({8, 4}, 3)};
  write_safetensors(m.dir + "/" + kShard1, {{"model.embed_tokens.weight", m.embed},
                                            {"model.norm.weight", m.norm}});
  write_safetensors(m.dir + "/" + kShard2, {{"model.layers.0.mlp.up_proj.weight", m.up}});
  test::write_bytes(m.dir + "/" + kSafetensorsIndexName, index_json);
  return m;
}

std::string index_json(const std::string& up_shard) {
  return fmt::format(R"({{"metadata": {{"total_size": 240}}, "weight_map": {{
      "model.embed_tokens.weight": "{0}", "model.norm.weight": "{0}",
      "model.layers.0.mlp.up_proj.weight": "{1}"}}}})",
                     kShard1, up_shard);
}

void expect_tensor(const WeightSource& source, const std::string& name, const Tensor& tensor,
                   const std::string& file) {
  const WeightInfo* info = source.find(name);
  ASSERT_NE(info, nullptr) << name;
  EXPECT_EQ(info->shape, tensor.shape());
  EXPECT_EQ(info->dtype, tensor.dtype());
  EXPECT_EQ(info->file, file);
  EXPECT_EQ(std::memcmp(info->data, tensor.data(), tensor.nbytes()), 0);
}

TEST(SafetensorsSource, ShardedFolder) {
  const ShardedModel m = write_sharded(index_json(kShard2));
  EXPECT_TRUE(has_safetensors(m.dir));
  const auto source = SafetensorsSource::open(m.dir);
  EXPECT_EQ(source->description(), m.dir + "/" + kSafetensorsIndexName + " (2 shards)");
  EXPECT_EQ(source->num_files(), 2);
  const std::vector<std::string> names = {"model.embed_tokens.weight",
                                          "model.layers.0.mlp.up_proj.weight", "model.norm.weight"};
  EXPECT_EQ(source->names(), names);
  expect_tensor(*source, "model.embed_tokens.weight", m.embed, m.dir + "/" + kShard1);
  expect_tensor(*source, "model.norm.weight", m.norm, m.dir + "/" + kShard1);
  expect_tensor(*source, "model.layers.0.mlp.up_proj.weight", m.up, m.dir + "/" + kShard2);
  EXPECT_EQ(source->find("lm_head.weight"), nullptr);

  const auto by_index = SafetensorsSource::open(m.dir + "/" + kSafetensorsIndexName);
  EXPECT_EQ(by_index->names(), names);
}

TEST(SafetensorsSource, SingleFileAndFolder) {
  const std::string dir = test::test_dir();
  EXPECT_FALSE(has_safetensors(dir));
  expect_error([&] { SafetensorsSource::open(dir); }, {dir, "model.safetensors.index.json"});
  const Tensor t = test::random_f32({2, 3}, 4);
  write_safetensors(dir + "/model.safetensors", {{"w", t}});
  EXPECT_TRUE(has_safetensors(dir));
  for (const std::string& path : {dir, dir + "/model.safetensors"}) {
    const auto source = SafetensorsSource::open(path);
    EXPECT_EQ(source->description(), dir + "/model.safetensors");
    EXPECT_EQ(source->names(), std::vector<std::string>{"w"});
    expect_tensor(*source, "w", t, dir + "/model.safetensors");
  }
}

TEST(SafetensorsSource, MissingShard) {
  const ShardedModel m = write_sharded(index_json("model-00003-of-00003.safetensors"));
  expect_error([&] { SafetensorsSource::open(m.dir); },
               {kSafetensorsIndexName, "model-00003-of-00003.safetensors", "missing",
                "'model.layers.0.mlp.up_proj.weight'"});
}

TEST(SafetensorsSource, TensorNotInItsShard) {
  const ShardedModel m = write_sharded(index_json(kShard1));
  expect_error([&] { SafetensorsSource::open(m.dir); },
               {kSafetensorsIndexName, kShard1, "'model.layers.0.mlp.up_proj.weight'",
                "has no such tensor"});
}

TEST(SafetensorsSource, BadIndex) {
  ShardedModel m = write_sharded(R"({"metadata": {}})");
  expect_error([&] { SafetensorsSource::open(m.dir); }, {kSafetensorsIndexName, "weight_map"});
  m = write_sharded(R"({"weight_map": {"a": )");
  expect_error([&] { SafetensorsSource::open(m.dir); },
               {kSafetensorsIndexName, "not valid JSON"});
  m = write_sharded(R"({"weight_map": {"a": "../model.safetensors"}})");
  expect_error([&] { SafetensorsSource::open(m.dir); }, {"'a'", "../model.safetensors"});
  m = write_sharded(R"({"weight_map": {"a": 3}})");
  expect_error([&] { SafetensorsSource::open(m.dir); }, {"'a'", "not a shard file name"});
  m = write_sharded(R"({"weight_map": {}})");
  expect_error([&] { SafetensorsSource::open(m.dir); }, {"lists no tensors"});
}

TEST(SafetensorsSource, CorruptShardNamesTheShard) {
  const ShardedModel m = write_sharded(index_json(kShard2));
  const std::string shard = m.dir + "/" + kShard2;
  const std::string bytes = test::read_bytes(shard);
  test::write_bytes(shard, std::string_view(bytes).substr(0, bytes.size() - 4));
  expect_error([&] { SafetensorsSource::open(m.dir); },
               {shard, "'model.layers.0.mlp.up_proj.weight'", "truncated"});
}

}  // namespace
}  // namespace strata
