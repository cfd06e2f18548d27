// HTTP to the Hugging Face Hub: a repo's commit and file list, a file's ETag and download
// location, and resumable downloads. Knows URLs and status codes, not the cache layout.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/hub/hub_options.h"

namespace strata::hub {

struct RepoInfo {
  std::string commit;               // "sha"
  std::vector<std::string> files;   // "siblings"[].rfilename
};

struct FileLocation {
  std::string etag;  // quotes and W/ stripped; sha256 for LFS files, git sha1 otherwise
  std::string url;   // where the bytes are: the resolve URL or the CDN it redirects to
};

class HubClient {
 public:
  explicit HubClient(const HubOptions& options) : options_(options) {}

  RepoInfo repo_info(const std::string& repo_id, const std::string& revision) const;
  FileLocation locate_file(const std::string& repo_id, const std::string& commit,
                           const std::string& filename) const;
  // Appends to `partial` from its current size with a Range request (restarting when the
  // server ignores the range); `label` names the file on the progress line.
  void download(const std::string& url, const std::filesystem::path& partial, const std::string& label) const;

 private:
  HubOptions options_;
};

}  // namespace strata::hub
