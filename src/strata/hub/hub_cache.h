// The Hugging Face cache layout, as huggingface_hub writes it, so both tools share files:
//   {cache}/models--{org}--{name}/refs/{revision}        the commit hash a revision points at
//   {cache}/models--{org}--{name}/blobs/{etag}           file contents, named by their ETag
//   {cache}/models--{org}--{name}/snapshots/{commit}/F   relative symlinks into blobs/
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace strata::hub {

class HubCache {
 public:
  HubCache(std::filesystem::path cache_dir, const std::string& repo_id);

  const std::filesystem::path& repo_dir() const { return repo_dir_; }
  // The commit a revision names: itself when it is 40 hex digits, else refs/{revision}.
  std::optional<std::string> commit_for(const std::string& revision) const;
  void write_ref(const std::string& revision, const std::string& commit) const;

  std::filesystem::path snapshot_dir(const std::string& commit) const;
  std::filesystem::path blob_path(const std::string& etag) const;
  // Points snapshots/{commit}/{filename} at blobs/{etag} (replacing what was there).
  void link_snapshot_file(const std::string& commit, const std::string& filename, const std::string& etag) const;

 private:
  std::filesystem::path repo_dir_;
};

bool is_commit_hash(const std::string& revision);

}  // namespace strata::hub
