// Resolving a repo id through the Hugging Face cache against a local Hub stand-in:
// the exact cache layout, no second download, commits, offline mode, resume, checksums,
// HTTP errors and GGUF tag selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "hub/hub_stand_in_support.h"
#include "strata/core/error.h"
#include "strata/hub/resolve_model.h"
#include "test_support.h"

namespace strata::test {
namespace {

namespace fs = std::filesystem;
using hub::HubOptions;
using hub::ModelReference;

constexpr char kRepo[] = "tiny-org/tiny-llama";
constexpr char kCommit[] = "0123456789abcdef0123456789abcdef01234567";

std::vector<StandInFile> llama_files() {
  const std::string dir = fixture_path("hf/llama/");
  return {{"config.json", read_whole_file(dir + "config.json")},
          {"generation_config.json", read_whole_file(dir + "generation_config.json")},
          {"model.safetensors", read_whole_file(dir + "model.safetensors"), /*lfs=*/true},
          {"README.md", "not needed"}};
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

class ResolveModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = temp_dir() + "/" + per_test_name("hf_cache");
    fs::remove_all(cache_);
  }
  HubOptions options(const HubStandIn& hub, const std::string& revision = "main") const {
    return {.cache_dir = cache_, .endpoint = hub.endpoint(), .revision = revision, .show_progress = false};
  }
  std::string repo_dir() const { return cache_ + "/models--tiny-org--tiny-llama"; }
  std::string cache_;
};

TEST_F(ResolveModelTest, DownloadsIntoTheHuggingFaceCacheLayout) {
  const std::vector<StandInFile> files = llama_files();
  HubStandIn hub(kRepo, kCommit, files);
  const std::string path = hub::resolve_model({.repo_id = kRepo}, options(hub));
  const std::string snapshot = repo_dir() + "/snapshots/" + kCommit;
  EXPECT_EQ(path, snapshot);
  EXPECT_EQ(read_whole_file(repo_dir() + "/refs/main"), kCommit);
  EXPECT_EQ(read_whole_file(snapshot + "/config.json"), files[0].bytes);
  EXPECT_EQ(read_whole_file(snapshot + "/model.safetensors"), files[2].bytes);
  EXPECT_EQ(fs::read_symlink(snapshot + "/config.json"), fs::path("../../blobs/" + git_blob_sha1_hex(files[0].bytes)));
  EXPECT_EQ(fs::read_symlink(snapshot + "/model.safetensors"), fs::path("../../blobs/" + sha256_hex(files[2].bytes)));
  EXPECT_TRUE(fs::is_regular_file(repo_dir() + "/blobs/" + sha256_hex(files[2].bytes)));
  EXPECT_FALSE(fs::exists(snapshot + "/README.md"));
  EXPECT_EQ(hub.num_body_gets(), 3);  // config, generation_config, weights
  const int requests = hub.num_requests();
  EXPECT_EQ(requests, 1 + 3 + 3);  // the revision API, then a HEAD and a GET per file

  EXPECT_EQ(hub::resolve_model({.repo_id = kRepo}, options(hub)), snapshot);
  EXPECT_EQ(hub.num_requests(), requests);  // the complete snapshot is used as it is
}

TEST_F(ResolveModelTest, ShardedRepoFetchesTheIndexedShardsAndTheTokenizer) {
  const std::string index =
      R"({"weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors",
                         "c": "model-00001-of-00002.safetensors"}})";
  HubStandIn hub(kRepo, kCommit,
                 {{"config.json", "{}"},
                  {"model.safetensors.index.json", index},
                  {"model-00001-of-00002.safetensors", "shard one", true},
                  {"model-00002-of-00002.safetensors", "shard two", true},
                  {"consolidated.safetensors", "not indexed", true},
                  {"tokenizer.json", "{\"t\": 1}"},
                  {"chat_template.jinja", "{{ messages }}"},
                  {"original/params.json", "{}"}});
  const std::string snapshot = hub::resolve_model({.repo_id = kRepo}, options(hub));
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(snapshot))
    names.push_back(entry.path().lexically_relative(snapshot).string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"chat_template.jinja", "config.json", "model-00001-of-00002.safetensors",
                                             "model-00002-of-00002.safetensors", "model.safetensors.index.json",
                                             "tokenizer.json"}));
  EXPECT_EQ(read_whole_file(snapshot + "/model-00002-of-00002.safetensors"), "shard two");
  const int requests = hub.num_requests();
  hub::resolve_model({.repo_id = kRepo}, options(hub));
  EXPECT_EQ(hub.num_requests(), requests);
}

TEST_F(ResolveModelTest, RevisionByCommitNeedsNoRef) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  EXPECT_EQ(hub::resolve_model({.repo_id = kRepo}, options(hub, kCommit)), repo_dir() + "/snapshots/" + kCommit);
  EXPECT_FALSE(fs::exists(repo_dir() + "/refs/" + kCommit));
  const int requests = hub.num_requests();
  HubOptions offline = options(hub, kCommit);
  offline.offline = true;
  EXPECT_EQ(hub::resolve_model({.repo_id = kRepo}, offline), repo_dir() + "/snapshots/" + kCommit);
  EXPECT_EQ(hub.num_requests(), requests);
}

TEST_F(ResolveModelTest, OfflineUsesTheCacheAndNeverTheNetwork) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  HubOptions offline = options(hub);
  offline.offline = true;
  const auto offline_error = [&](const std::string& missing) {
    return fmt::format("HF_HUB_OFFLINE is set and tiny-org/tiny-llama at revision main is not complete in the "
                       "cache {} ({}); unset HF_HUB_OFFLINE to download it",
                       repo_dir(), missing);
  };
  EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = kRepo}, offline); }), offline_error("refs/main is missing"));
  EXPECT_EQ(hub.num_requests(), 0);
  hub::resolve_model({.repo_id = kRepo}, options(hub));
  const int requests = hub.num_requests();
  EXPECT_EQ(hub::resolve_model({.repo_id = kRepo}, offline), repo_dir() + "/snapshots/" + kCommit);
  fs::remove(repo_dir() + "/snapshots/" + kCommit + "/model.safetensors");
  EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = kRepo}, offline); }),
            offline_error("missing model.safetensors"));
  EXPECT_EQ(hub.num_requests(), requests);
}

TEST_F(ResolveModelTest, ResumesAPartialDownloadWithARangeRequest) {
  const std::vector<StandInFile> files = llama_files();
  HubStandIn hub(kRepo, kCommit, files);
  const std::string blob = repo_dir() + "/blobs/" + sha256_hex(files[2].bytes);
  fs::create_directories(repo_dir() + "/blobs");
  std::ofstream(blob + ".incomplete", std::ios::binary) << files[2].bytes.substr(0, 1000);
  hub::resolve_model({.repo_id = kRepo}, options(hub));
  EXPECT_EQ(read_whole_file(blob), files[2].bytes);
  EXPECT_FALSE(fs::exists(blob + ".incomplete"));
  const std::vector<std::string> ranges = hub.range_headers();
  EXPECT_EQ(std::count(ranges.begin(), ranges.end(), "bytes=1000-"), 1);
}

TEST_F(ResolveModelTest, APartialFileWithEveryByteIsKept) {
  const std::vector<StandInFile> files = llama_files();
  HubStandIn hub(kRepo, kCommit, files);
  const std::string blob = repo_dir() + "/blobs/" + sha256_hex(files[2].bytes);
  fs::create_directories(repo_dir() + "/blobs");
  std::ofstream(blob + ".incomplete", std::ios::binary) << files[2].bytes;
  hub::resolve_model({.repo_id = kRepo}, options(hub));  // its Range starts past the end: 416
  EXPECT_EQ(read_whole_file(blob), files[2].bytes);
}

TEST_F(ResolveModelTest, ResumesADownloadCutOffMidway) {
  const std::vector<StandInFile> files = llama_files();
  HubStandIn hub(kRepo, kCommit, files);
  hub.cut_file = "model.safetensors";
  const std::string message = error_of([&] { hub::resolve_model({.repo_id = kRepo}, options(hub)); });
  EXPECT_NE(message.find("run the command again to resume it"), std::string::npos) << message;
  const std::string blob = repo_dir() + "/blobs/" + sha256_hex(files[2].bytes);
  EXPECT_EQ(fs::file_size(blob + ".incomplete"), files[2].bytes.size() / 2);
  EXPECT_FALSE(fs::exists(repo_dir() + "/snapshots/" + kCommit + "/config.json"));  // fetched last

  hub::resolve_model({.repo_id = kRepo}, options(hub));
  EXPECT_EQ(read_whole_file(blob), files[2].bytes);
  const std::vector<std::string> ranges = hub.range_headers();
  EXPECT_EQ(std::count(ranges.begin(), ranges.end(), fmt::format("bytes={}-", files[2].bytes.size() / 2)), 1);
}

TEST_F(ResolveModelTest, SendsTheTokenToTheHub) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  HubOptions with_token = options(hub);
  with_token.token = "hf_secret";
  hub::resolve_model({.repo_id = kRepo}, with_token);
  const std::vector<std::string> sent = hub.authorization_headers();
  ASSERT_EQ(sent.size(), 7u);
  EXPECT_EQ(std::count(sent.begin(), sent.end(), "Bearer hf_secret"), 7);
}

TEST_F(ResolveModelTest, RefusesAChecksumMismatch) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  hub.wrong_etag_file = "model.safetensors";
  const std::string message = error_of([&] { hub::resolve_model({.repo_id = kRepo}, options(hub)); });
  EXPECT_NE(message.find("tiny-org/tiny-llama/model.safetensors: the download's checksum is"), std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(repo_dir() + "/snapshots/" + kCommit + "/model.safetensors"));
  EXPECT_FALSE(fs::exists(repo_dir() + "/snapshots/" + kCommit + "/config.json"));
  for (const auto& entry : fs::directory_iterator(repo_dir() + "/blobs"))
    EXPECT_EQ(entry.path().extension(), "") << entry.path();  // the bad .incomplete is gone
}

TEST_F(ResolveModelTest, RefusesAGitBlobChecksumMismatch) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  hub.wrong_etag_file = "config.json";
  const std::string message = error_of([&] { hub::resolve_model({.repo_id = kRepo}, options(hub)); });
  EXPECT_NE(message.find("tiny-org/tiny-llama/config.json: the download's checksum is"), std::string::npos)
      << message;
}

TEST_F(ResolveModelTest, UnauthorizedSaysToSetTheToken) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  for (const int status : {401, 403}) {
    hub.forced_status = status;
    EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = kRepo}, options(hub)); }),
              fmt::format("tiny-org/tiny-llama at revision main: HTTP {}: the repo is private or gated; set "
                          "HF_TOKEN to a token with access and accept the model's license on its Hub page",
                          status));
  }
}

TEST_F(ResolveModelTest, NotFoundSaysTheRepoOrRevisionDoesNotExist) {
  HubStandIn hub(kRepo, kCommit, llama_files());
  EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = kRepo}, options(hub, "no-such-branch")); }),
            "tiny-org/tiny-llama at revision no-such-branch: HTTP 404: no such repo or revision on the Hub, and "
            "no local path 'tiny-org/tiny-llama' either; check the spelling");
  EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = "tiny-org/other"}, options(hub)); }),
            "tiny-org/other at revision main: HTTP 404: no such repo or revision on the Hub, and no local path "
            "'tiny-org/other' either; check the spelling");
}

TEST_F(ResolveModelTest, GgufTagPicksOneFile) {
  HubStandIn hub(kRepo, kCommit,
                 {{"tiny-Q4_K_M.gguf", "gguf q4", true}, {"tiny-Q8_0.gguf", "gguf q8", true}, {"README.md", "x"}});
  const std::string path = hub::resolve_model({.repo_id = kRepo, .gguf_tag = "q4_k_m"}, options(hub));
  EXPECT_EQ(path, repo_dir() + "/snapshots/" + kCommit + "/tiny-Q4_K_M.gguf");
  EXPECT_EQ(read_whole_file(path), "gguf q4");
  EXPECT_FALSE(fs::exists(repo_dir() + "/snapshots/" + kCommit + "/tiny-Q8_0.gguf"));
  EXPECT_EQ(hub.num_body_gets(), 1);

  HubOptions offline = options(hub);
  offline.offline = true;
  const int requests = hub.num_requests();
  EXPECT_EQ(hub::resolve_model({.repo_id = kRepo, .gguf_tag = "Q4_K_M"}, offline), path);
  const std::string message = error_of([&] { hub::resolve_model({.repo_id = kRepo, .gguf_tag = "Q8_0"}, offline); });
  EXPECT_NE(message.find("(no single .gguf file matching 'Q8_0'); unset HF_HUB_OFFLINE"), std::string::npos)
      << message;
  EXPECT_EQ(hub.num_requests(), requests);
}

TEST_F(ResolveModelTest, AmbiguousGgufTagListsTheFiles) {
  HubStandIn hub(kRepo, kCommit, {{"tiny-Q4_K_M.gguf", "a", true}, {"tiny-Q4_K_S.gguf", "b", true}});
  EXPECT_EQ(error_of([&] { hub::resolve_model({.repo_id = kRepo, .gguf_tag = "Q4_K"}, options(hub)); }),
            "tiny-org/tiny-llama has 2 .gguf files matching 'Q4_K'; pick exactly one with tiny-org/tiny-llama:TAG "
            "from: tiny-Q4_K_M.gguf, tiny-Q4_K_S.gguf");
  EXPECT_EQ(hub.num_body_gets(), 0);
}

TEST(SelectGguf, NoneOrSeveralMatchesListTheFiles) {
  const std::vector<std::string> files{"a-Q4_K_M.gguf", "a-Q4_K_S.gguf", "config.json"};
  EXPECT_EQ(hub::select_gguf(files, "Q4_K_S", "o/a"), "a-Q4_K_S.gguf");
  EXPECT_EQ(error_of([&] { hub::select_gguf(files, "Q4_K", "o/a"); }),
            "o/a has 2 .gguf files matching 'Q4_K'; pick exactly one with o/a:TAG from: a-Q4_K_M.gguf, "
            "a-Q4_K_S.gguf");
  EXPECT_EQ(error_of([&] { hub::select_gguf(files, "Q8_0", "o/a"); }),
            "o/a has no .gguf files matching 'Q8_0'; pick exactly one with o/a:TAG from: a-Q4_K_M.gguf, "
            "a-Q4_K_S.gguf");
  EXPECT_EQ(error_of([&] { hub::select_gguf({"config.json"}, "Q8_0", "o/a"); }),
            "o/a has no .gguf files; drop ':Q8_0' to load its safetensors");
}

}  // namespace
}  // namespace strata::test
