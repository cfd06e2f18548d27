#include "strata/hub/resolve_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

#include "strata/core/error.h"
#include "strata/hub/file_digest.h"
#include "strata/hub/hub_cache.h"
#include "strata/hub/hub_client.h"

namespace strata::hub {
namespace {

namespace fs = std::filesystem;

constexpr const char* kConfig = "config.json";
constexpr const char* kIndex = "model.safetensors.index.json";
constexpr const char* kSingleWeights = "model.safetensors";
// Fetched when the repo has them; the tokenizer and chat template live here, and a
// sentence-transformers model's pooling (model/pooler_config.h).
constexpr const char* kOptionalFiles[] = {"tokenizer.json", "tokenizer_config.json", "generation_config.json",
                                          "chat_template.jinja", "modules.json", "1_Pooling/config.json"};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool is_gguf(const std::string& name) { return name.size() > 5 && lower(name).ends_with(".gguf"); }

bool contains(const std::vector<std::string>& files, const std::string& name) {
  return std::find(files.begin(), files.end(), name) != files.end();
}

std::vector<std::string> shards_in_index(const fs::path& index) {
  std::ifstream in(index);
  std::set<std::string> shards;
  try {
    const nlohmann::json body = nlohmann::json::parse(in);  // named: a temporary would die before the loop
    for (const auto& [tensor, file] : body.at("weight_map").items()) shards.insert(file.get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    fail("{} is not a safetensors index ({}); delete it from the cache to download it again", index.string(),
         e.what());
  }
  return {shards.begin(), shards.end()};
}

std::vector<std::string> files_in_snapshot(const fs::path& snapshot) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(snapshot, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (fs::exists(it->path())) files.push_back(it->path().lexically_relative(snapshot).generic_string());
  return files;
}

bool wants_gguf(const ModelReference& ref, const std::vector<std::string>& files) {
  return !ref.gguf_tag.empty() || (!contains(files, kConfig) && std::any_of(files.begin(), files.end(), is_gguf));
}

// The weights a safetensors snapshot still lacks; empty when Strata can load it.
std::vector<std::string> missing_weights(const fs::path& snapshot) {
  if (!fs::exists(snapshot / kConfig)) return {kConfig};
  std::vector<std::string> needed{kSingleWeights};
  if (fs::exists(snapshot / kIndex)) needed = shards_in_index(snapshot / kIndex);
  std::erase_if(needed, [&](const std::string& f) { return fs::exists(snapshot / f); });
  return needed;
}

struct CacheLookup {
  std::optional<std::string> path;  // what to load, when the snapshot has everything
  std::string missing;              // else what it lacks, for the offline error
};

CacheLookup look_in_cache(const ModelReference& ref, const HubCache& cache, const std::string& revision) {
  const std::optional<std::string> commit = cache.commit_for(revision);
  if (!commit) return {.missing = fmt::format("refs/{} is missing", revision)};
  const fs::path snapshot = cache.snapshot_dir(*commit);
  if (!fs::is_directory(snapshot)) return {.missing = fmt::format("snapshots/{} is missing", *commit)};
  const std::vector<std::string> files = files_in_snapshot(snapshot);
  if (wants_gguf(ref, files)) {
    const long count = std::count_if(files.begin(), files.end(), [&](const std::string& f) {
      return is_gguf(f) && lower(f).find(lower(ref.gguf_tag)) != std::string::npos;
    });
    if (count != 1) return {.missing = fmt::format("no single .gguf file matching '{}'", ref.gguf_tag)};
    return {.path = (snapshot / select_gguf(files, ref.gguf_tag, ref.repo_id)).string()};
  }
  const std::vector<std::string> missing = missing_weights(snapshot);
  if (!missing.empty()) return {.missing = fmt::format("missing {}", fmt::join(missing, ", "))};
  return {.path = snapshot.string()};
}

void check_repo_filename(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos ||
      name.find('\\') != std::string::npos)
    fail("the Hub lists a file named '{}', which is not a safe relative path; check HF_ENDPOINT", name);
}

struct Fetcher {
  const HubClient& client;
  const HubCache& cache;
  const std::string& repo_id;
  const std::string& commit;

  // Downloads into blobs/{etag} (through blobs/{etag}.incomplete) and links the snapshot.
  void fetch(const std::string& filename) const {
    check_repo_filename(filename);
    if (fs::exists(cache.snapshot_dir(commit) / filename)) return;
    const FileLocation location = client.locate_file(repo_id, commit, filename);
    if (location.etag.empty() || location.etag.find('/') != std::string::npos || location.etag.starts_with("."))
      fail("{}/{}: the Hub sent no usable ETag ('{}'); check HF_ENDPOINT", repo_id, filename, location.etag);
    const fs::path blob = cache.blob_path(location.etag);
    if (!fs::exists(blob)) {
      fs::create_directories(blob.parent_path());
      fs::path partial = blob;
      partial += ".incomplete";
      client.download(location.url, partial, repo_id + "/" + filename);
      try {
        verify_etag(partial, location.etag, repo_id + "/" + filename);
      } catch (const Error&) {
        fs::remove(partial);
        throw;
      }
      fs::rename(partial, blob);
    }
    cache.link_snapshot_file(commit, filename, location.etag);
  }
};

std::string download_model(const ModelReference& ref, const HubOptions& options, const HubCache& cache) {
  const HubClient client(options);
  const RepoInfo info = client.repo_info(ref.repo_id, options.revision);
  if (!is_commit_hash(info.commit))
    fail("{}: the Hub named commit '{}', not a 40-hex hash; check HF_ENDPOINT", ref.repo_id, info.commit);
  cache.write_ref(options.revision, info.commit);
  const Fetcher fetcher{client, cache, ref.repo_id, info.commit};
  const fs::path snapshot = cache.snapshot_dir(info.commit);
  if (wants_gguf(ref, info.files)) {
    const std::string file = select_gguf(info.files, ref.gguf_tag, ref.repo_id);
    fetcher.fetch(file);
    return (snapshot / file).string();
  }
  if (!contains(info.files, kConfig))
    fail("{} at {} has neither config.json nor .gguf files; Strata loads Hugging Face safetensors or GGUF models",
         ref.repo_id, options.revision);
  for (const char* optional : kOptionalFiles)
    if (contains(info.files, optional)) fetcher.fetch(optional);
  if (contains(info.files, kIndex)) {
    fetcher.fetch(kIndex);
    for (const std::string& shard : shards_in_index(snapshot / kIndex)) fetcher.fetch(shard);
  } else if (contains(info.files, kSingleWeights)) {
    fetcher.fetch(kSingleWeights);
  } else {
    fail("{} at {} has no model.safetensors or model.safetensors.index.json; Strata loads safetensors or GGUF",
         ref.repo_id, options.revision);
  }
  // config.json last: a snapshot with it (and the weights) is complete, so an interrupted
  // download is never taken for a finished one.
  fetcher.fetch(kConfig);
  return snapshot.string();
}

}  // namespace

std::string select_gguf(const std::vector<std::string>& files, const std::string& tag, const std::string& repo_id) {
  std::vector<std::string> ggufs, matches;
  for (const std::string& f : files) {
    if (!is_gguf(f)) continue;
    ggufs.push_back(f);
    if (lower(f).find(lower(tag)) != std::string::npos) matches.push_back(f);
  }
  if (matches.size() == 1) return matches.front();
  if (ggufs.empty()) fail("{} has no .gguf files; drop ':{}' to load its safetensors", repo_id, tag);
  fail("{} has {} .gguf files matching '{}'; pick exactly one with {}:TAG from: {}", repo_id,
       matches.empty() ? "no" : std::to_string(matches.size()), tag, repo_id, fmt::join(ggufs, ", "));
}

std::string resolve_model(const ModelReference& ref, const HubOptions& options) {
  const HubCache cache(options.cache_dir, ref.repo_id);
  const CacheLookup cached = look_in_cache(ref, cache, options.revision);
  if (cached.path) return *cached.path;
  if (options.offline)
    fail("HF_HUB_OFFLINE is set and {} at revision {} is not complete in the cache {} ({}); unset "
         "HF_HUB_OFFLINE to download it",
         ref.repo_id, options.revision, cache.repo_dir().string(), cached.missing);
  return download_model(ref, options, cache);
}

}  // namespace strata::hub
