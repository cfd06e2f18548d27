#include "strata/hub/hub_cache.h"

#include <fstream>

#include "strata/core/error.h"

namespace strata::hub {

namespace fs = std::filesystem;

bool is_commit_hash(const std::string& revision) {
  if (revision.size() != 40) return false;
  for (const char c : revision)
    if (!std::isxdigit(static_cast<unsigned char>(c)) || std::isupper(static_cast<unsigned char>(c))) return false;
  return true;
}

HubCache::HubCache(fs::path cache_dir, const std::string& repo_id) {
  std::string folder = "models--" + repo_id;
  for (size_t at = folder.find('/'); at != std::string::npos; at = folder.find('/', at))
    folder.replace(at, 1, "--");
  repo_dir_ = std::move(cache_dir) / folder;
}

std::optional<std::string> HubCache::commit_for(const std::string& revision) const {
  if (is_commit_hash(revision)) return revision;
  std::ifstream in(repo_dir_ / "refs" / revision);
  if (!in) return std::nullopt;
  std::string commit;
  in >> commit;
  if (!is_commit_hash(commit)) return std::nullopt;
  return commit;
}

void HubCache::write_ref(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;  // huggingface_hub keeps no ref for a commit revision
  const fs::path ref = repo_dir_ / "refs" / revision;
  fs::create_directories(ref.parent_path());
  std::ofstream out(ref, std::ios::trunc);
  out << commit;  // no newline: huggingface_hub's own format
  if (!out) fail("cannot write {}; check that the Hugging Face cache folder is writable", ref.string());
}

fs::path HubCache::snapshot_dir(const std::string& commit) const { return repo_dir_ / "snapshots" / commit; }

fs::path HubCache::blob_path(const std::string& etag) const { return repo_dir_ / "blobs" / etag; }

void HubCache::link_snapshot_file(const std::string& commit, const std::string& filename,
                                  const std::string& etag) const {
  const fs::path link = snapshot_dir(commit) / filename;
  fs::create_directories(link.parent_path());
  const fs::path target = blob_path(etag).lexically_relative(link.parent_path());
  std::error_code ec;
  fs::remove(link, ec);
  fs::create_symlink(target, link, ec);
  if (ec) fail("cannot link {} to {}: {}; check the Hugging Face cache folder", link.string(), target.string(),
               ec.message());
}

}  // namespace strata::hub
