#include "strata/hub/hub_client.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>

#include "strata/core/error.h"

namespace strata::hub {
namespace {

struct SplitUrl {
  std::string origin;  // scheme://host[:port]
  std::string path;    // /...
};

SplitUrl split_url(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) fail("'{}' is not an http(s) URL; check HF_ENDPOINT", url);
  const size_t slash = url.find('/', scheme + 3);
  if (slash == std::string::npos) return {url, "/"};
  return {url.substr(0, slash), url.substr(slash)};
}

std::unique_ptr<httplib::Client> make_client(const std::string& origin) {
  auto client = std::make_unique<httplib::Client>(origin);
  client->set_connection_timeout(30);
  client->set_read_timeout(120);
  client->set_follow_location(false);  // redirects are followed by hand: the ETag is on the first hop
  client->set_url_encode(false);       // paths are escaped here; signed CDN URLs must pass unchanged
  client->set_decompress(false);       // bytes as stored: Range offsets and checksums are of those
  return client;
}

// The token goes only to the Hub itself, never to a CDN a redirect names.
httplib::Headers headers_for(const HubOptions& options, const std::string& origin) {
  httplib::Headers headers{{"User-Agent", "strata"}, {"Accept-Encoding", "identity"}};
  if (!options.token.empty() && origin == split_url(options.endpoint).origin)
    headers.emplace("Authorization", "Bearer " + options.token);
  return headers;
}

[[noreturn]] void fail_status(int status, const std::string& what) {
  if (status == 401 || status == 403)
    fail("{}: HTTP {}: the repo is private or gated; set HF_TOKEN to a token with access and accept the "
         "model's license on its Hub page",
         what, status);
  if (status == 404) fail("{}: HTTP 404: the file is not in the repo at this commit; check HF_ENDPOINT", what);
  fail("{}: HTTP {} from the Hub; try again later", what, status);
}

std::string strip_etag(std::string etag) {
  if (etag.rfind("W/", 0) == 0) etag.erase(0, 2);
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') etag = etag.substr(1, etag.size() - 2);
  return etag;
}

// keep_slash: a file path inside the repo; a revision such as refs/pr/1 is one path segment.
std::string url_path_escape(const std::string& text, bool keep_slash) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
      out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// One stderr line, rewritten at most every half second: bytes, speed, time left.
class ProgressLine {
 public:
  ProgressLine(std::string label, uint64_t start_bytes, bool enabled)
      : label_(std::move(label)), start_bytes_(start_bytes), enabled_(enabled) {}

  void update(uint64_t bytes, uint64_t total, bool last) {
    const auto now = std::chrono::steady_clock::now();
    if (!enabled_ || (!last && now - printed_ < std::chrono::milliseconds(500))) return;
    printed_ = now;
    const double seconds = std::max(1e-3, std::chrono::duration<double>(now - started_).count());
    const double speed = (bytes - start_bytes_) / seconds;
    const double eta = speed > 0 && total > bytes ? (total - bytes) / speed : 0;
    std::fprintf(stderr, "\rdownloading %s: %.1f / %.1f MiB, %.1f MiB/s, ETA %.0f s   %s", label_.c_str(),
                 bytes / 1048576.0, total / 1048576.0, speed / 1048576.0, eta, last ? "\n" : "");
    std::fflush(stderr);
  }

 private:
  std::string label_;
  uint64_t start_bytes_;
  bool enabled_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point printed_{};
};

}  // namespace

RepoInfo HubClient::repo_info(const std::string& repo_id, const std::string& revision) const {
  const SplitUrl base = split_url(options_.endpoint);
  const std::string path = base.path == "/" ? "" : base.path;
  const std::string what = fmt::format("{} at revision {}", repo_id, revision);
  auto client = make_client(base.origin);
  const std::string api = path + "/api/models/" + repo_id + "/revision/" + url_path_escape(revision, false);
  auto res = client->Get(api, headers_for(options_, base.origin));
  if (!res) fail("{}: cannot reach {}: {}; check the network or set HF_HUB_OFFLINE=1 to use the cache only",
                 what, options_.endpoint, httplib::to_string(res.error()));
  if (res->status == 404)
    fail("{}: HTTP 404: no such repo or revision on the Hub, and no local path '{}' either; check the spelling",
         what, repo_id);
  if (res->status != 200) fail_status(res->status, what);
  RepoInfo info;
  try {
    const nlohmann::json body = nlohmann::json::parse(res->body);
    info.commit = body.at("sha").get<std::string>();
    for (const auto& sibling : body.at("siblings")) info.files.push_back(sibling.at("rfilename"));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: the Hub's answer is not the expected JSON ({}); check HF_ENDPOINT", what, e.what());
  }
  return info;
}

FileLocation HubClient::locate_file(const std::string& repo_id, const std::string& commit,
                                    const std::string& filename) const {
  const SplitUrl base = split_url(options_.endpoint);
  std::string url =
      options_.endpoint + "/" + repo_id + "/resolve/" + commit + "/" + url_path_escape(filename, /*keep_slash=*/true);
  const std::string what = repo_id + "/" + filename;
  for (int hop = 0; hop < 5; ++hop) {
    const SplitUrl at = split_url(url);
    auto res = make_client(at.origin)->Head(at.path, headers_for(options_, at.origin));
    if (!res) fail("{}: cannot reach {}: {}", what, at.origin, httplib::to_string(res.error()));
    if (res->status < 300 || res->status >= 400) {
      if (res->status != 200) fail_status(res->status, what);
      return {.etag = strip_etag(res->get_header_value("ETag")), .url = url};
    }
    const std::string location = res->get_header_value("Location");
    const std::string linked = res->get_header_value("X-Linked-Etag");
    const std::string next = location.rfind("/", 0) == 0 ? at.origin + location : location;
    // An LFS file: the Hub names its sha256 here and sends the bytes from a CDN.
    if (!linked.empty()) return {.etag = strip_etag(linked), .url = next};
    url = next;
  }
  fail("{}: more than 5 redirects from the Hub", what);
}

void HubClient::download(const std::string& url, const std::filesystem::path& partial,
                         const std::string& label) const {
  std::error_code ec;
  const uint64_t have = std::filesystem::exists(partial, ec) ? std::filesystem::file_size(partial) : 0;
  const SplitUrl at = split_url(url);
  httplib::Headers headers = headers_for(options_, at.origin);
  if (have > 0) headers.emplace("Range", fmt::format("bytes={}-", have));
  std::ofstream out;
  int status = 0;
  uint64_t written = have, total = 0;
  ProgressLine progress(label, have, options_.show_progress);
  auto client = make_client(at.origin);
  client->set_follow_location(true);
  auto res = client->Get(
      at.path, headers,
      [&](const httplib::Response& response) {
        status = response.status;
        if (status != 200 && status != 206) return false;
        // 200 to a Range request: the server sends the whole file, so start over.
        const bool append = status == 206;
        written = append ? have : 0;
        const std::string length = response.get_header_value("Content-Length");
        total = written + std::strtoull(length.c_str(), nullptr, 10);
        out.open(partial, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
        return static_cast<bool>(out);
      },
      [&](const char* data, size_t size) {
        out.write(data, static_cast<std::streamsize>(size));
        written += size;
        progress.update(written, std::max(total, written), false);
        return static_cast<bool>(out);
      });
  out.close();
  // 416: the partial file already has every byte (a run stopped before renaming it); the
  // checksum that follows decides whether it is kept.
  if (status == 416 && have > 0) return;
  if (status != 0 && status != 200 && status != 206) fail_status(status, label);
  if (!res || res->status >= 300 || (total > 0 && written != total))
    fail("{}: the download stopped at {} of {} bytes ({}); run the command again to resume it", label, written,
         total, res ? "connection closed" : httplib::to_string(res.error()));
  progress.update(written, written, true);
}

}  // namespace strata::hub
