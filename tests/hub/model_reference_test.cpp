// Telling a repo id from a path, and the Hugging Face environment variables.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

#include "strata/hub/hub_options.h"
#include "strata/hub/model_reference.h"
#include "test_support.h"

namespace strata::test {
namespace {

using hub::parse_model_reference;

TEST(ModelReference, ParsesRepoIdsAndGgufTags) {
  const auto plain = parse_model_reference("Qwen/Qwen3-8B");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->repo_id, "Qwen/Qwen3-8B");
  EXPECT_EQ(plain->gguf_tag, "");
  const auto tagged = parse_model_reference("unsloth/Qwen3-8B-GGUF:Q4_K_M");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->repo_id, "unsloth/Qwen3-8B-GGUF");
  EXPECT_EQ(tagged->gguf_tag, "Q4_K_M");
}

TEST(ModelReference, PathsAreNotRepoIds) {
  for (const char* text : {"model.gguf", "/abs/org/name", "./org/name", "a/b/c", "org/../x", "org/na me", "org/",
                           "../x", "org/name:", "org--x/name"})
    EXPECT_FALSE(parse_model_reference(text)) << text;
  // An existing folder that looks like a repo id is a path.
  const std::filesystem::path old_cwd = std::filesystem::current_path();
  std::filesystem::current_path(temp_dir());
  std::filesystem::create_directories("existing-org/existing-name");
  EXPECT_FALSE(parse_model_reference("existing-org/existing-name"));
  EXPECT_TRUE(parse_model_reference("existing-org/missing-name"));
  std::filesystem::current_path(old_cwd);
}

// Sets a variable for one scope and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HubOptions, FollowsTheHuggingFaceVariables) {
  ScopedEnv home("HOME", "/home/u"), xdg("XDG_CACHE_HOME", nullptr), hf_home("HF_HOME", nullptr),
      cache("HF_HUB_CACHE", nullptr), endpoint("HF_ENDPOINT", nullptr), token("HF_TOKEN", nullptr),
      offline("HF_HUB_OFFLINE", nullptr);
  hub::HubOptions o = hub::hub_options_from_environment("main");
  EXPECT_EQ(o.cache_dir, "/home/u/.cache/huggingface/hub");
  EXPECT_EQ(o.endpoint, "https://huggingface.co");
  EXPECT_EQ(o.token, "");
  EXPECT_FALSE(o.offline);
  {
    ScopedEnv a("HF_HOME", "/hf"), b("HF_ENDPOINT", "http://127.0.0.1:9/"), c("HF_TOKEN", "hf_x"),
        d("HF_HUB_OFFLINE", "1");
    o = hub::hub_options_from_environment("v2");
    EXPECT_EQ(o.cache_dir, "/hf/hub");
    EXPECT_EQ(o.endpoint, "http://127.0.0.1:9");
    EXPECT_EQ(o.token, "hf_x");
    EXPECT_TRUE(o.offline);
    EXPECT_EQ(o.revision, "v2");
    ScopedEnv e("HF_HUB_CACHE", "/elsewhere");
    EXPECT_EQ(hub::hub_options_from_environment("main").cache_dir, "/elsewhere");
  }
  EXPECT_EQ(std::getenv("HF_HOME"), nullptr);
}

}  // namespace
}  // namespace strata::test
