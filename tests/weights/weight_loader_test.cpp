#include <gtest/gtest.h>

#include "strata/weights/safetensors_source.h"
#include "strata/weights/safetensors_writer.h"
#include "strata/weights/weight_loader.h"
#include "weights_test_util.h"

namespace strata {
namespace {

using test::expect_error;

class WeightLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = test::test_dir() + "/model.safetensors";
    write_safetensors(path_, {{"model.layers.0.self_attn.q_proj.weight", test::random_f32({8, 4}, 1)},
                              {"model.norm.weight", test::random_f32({4}, 2)}});
    source_ = SafetensorsSource::open(path_);
  }
  std::string path_;
  std::unique_ptr<SafetensorsSource> source_;
};

TEST_F(WeightLoaderTest, ScopesPrefixNames) {
  const WeightLoader weights(*source_);
  const WeightLoader attn = weights.scope("model").scope("layers.0").scope("self_attn");
  EXPECT_EQ(attn.full_name("q_proj.weight"), "model.layers.0.self_attn.q_proj.weight");
  const WeightInfo& q = attn.require("q_proj.weight", {8, 4});
  EXPECT_EQ(q.name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(&q, source_->find("model.layers.0.self_attn.q_proj.weight"));
  EXPECT_EQ(weights.scope("model").optional("norm.weight", {4}), source_->find("model.norm.weight"));
  EXPECT_EQ(attn.optional("q_proj.bias", {8}), nullptr);
}

TEST_F(WeightLoaderTest, MissingTensorNamesItAndTheSource) {
  const WeightLoader layer = WeightLoader(*source_).scope("model.layers.0");
  expect_error([&] { layer.require("self_attn.k_proj.weight", {8, 4}); },
               {"missing tensor 'model.layers.0.self_attn.k_proj.weight'", path_});
}

TEST_F(WeightLoaderTest, WrongShapeNamesBothShapes) {
  const WeightLoader layer = WeightLoader(*source_).scope("model.layers.0");
  expect_error([&] { layer.require("self_attn.q_proj.weight", {4, 8}); },
               {"'model.layers.0.self_attn.q_proj.weight'", path_, "has shape [8, 4]",
                "implies [4, 8]"});
  expect_error([&] { WeightLoader(*source_).optional("model.norm.weight", {4, 1}); },
               {"'model.norm.weight'", "[4]", "[4, 1]"});
}

}  // namespace
}  // namespace strata
