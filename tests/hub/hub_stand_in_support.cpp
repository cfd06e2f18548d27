#include "hub/hub_stand_in_support.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <openssl/evp.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

namespace strata::test {
namespace {

std::string digest_hex(const std::string& bytes, const EVP_MD* md) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), out, &size, md, nullptr);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", out[i]);
  return hex;
}

}  // namespace

std::string sha256_hex(const std::string& bytes) { return digest_hex(bytes, EVP_sha256()); }

std::string git_blob_sha1_hex(const std::string& bytes) {
  return digest_hex("blob " + std::to_string(bytes.size()) + std::string(1, '\0') + bytes, EVP_sha1());
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

HubStandIn::HubStandIn(std::string repo_id, std::string commit, std::vector<StandInFile> files)
    : repo_id_(std::move(repo_id)), commit_(std::move(commit)), files_(std::move(files)) {
  add_routes();
  port_ = server_.bind_to_any_port("127.0.0.1");
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

HubStandIn::~HubStandIn() {
  server_.stop();
  thread_.join();
}

std::vector<std::string> HubStandIn::range_headers() const {
  std::lock_guard lock(mutex_);
  return range_headers_;
}

std::vector<std::string> HubStandIn::authorization_headers() const {
  std::lock_guard lock(mutex_);
  return authorization_headers_;
}

const StandInFile* HubStandIn::find(const std::string& name) const {
  for (const StandInFile& f : files_)
    if (f.name == name) return &f;
  return nullptr;
}

std::string HubStandIn::etag_of(const StandInFile& file) const {
  std::string etag = file.lfs ? sha256_hex(file.bytes) : git_blob_sha1_hex(file.bytes);
  if (file.name == wrong_etag_file) etag.back() = etag.back() == '0' ? '1' : '0';
  return etag;
}

void HubStandIn::serve_bytes(const httplib::Request& req, httplib::Response& res, const StandInFile& file) {
  if (req.method == "GET") {
    ++num_body_gets_;
    std::lock_guard lock(mutex_);
    range_headers_.push_back(req.get_header_value("Range"));
  }
  if (req.method == "GET" && file.name == cut_file && !std::exchange(cut_done_, true)) {
    // Promise the whole length, send half, then drop the connection.
    res.set_content_provider(file.bytes.size(), "application/octet-stream",
                             [&file](size_t, size_t, httplib::DataSink& sink) {
                               sink.write(file.bytes.data(), file.bytes.size() / 2);
                               return false;
                             });
    return;
  }
  // httplib answers a Range request with 206 and the asked-for slice of this content.
  res.set_content(file.bytes, "application/octet-stream");
}

void HubStandIn::add_routes() {
  server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    ++num_requests_;
    {
      std::lock_guard lock(mutex_);
      authorization_headers_.push_back(req.get_header_value("Authorization"));
    }
    if (forced_status == 0) return httplib::Server::HandlerResponse::Unhandled;
    res.status = forced_status;
    return httplib::Server::HandlerResponse::Handled;
  });
  server_.Get("/api/models/(.+)/revision/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.matches[1] != repo_id_ || (req.matches[2] != "main" && req.matches[2] != commit_)) {
      res.status = 404;
      return;
    }
    nlohmann::json body{{"id", repo_id_}, {"sha", commit_}, {"siblings", nlohmann::json::array()}};
    for (const StandInFile& f : files_) body["siblings"].push_back({{"rfilename", f.name}});
    res.set_content(body.dump(), "application/json");
  });
  server_.Get("/cdn/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
    for (const StandInFile& f : files_)
      if (f.lfs && sha256_hex(f.bytes) == req.matches[1]) return serve_bytes(req, res, f);
    res.status = 404;
  });
  server_.Get("/(.+)/resolve/([0-9a-f]{40})/(.+)", [this](const httplib::Request& req, httplib::Response& res) {
    const StandInFile* file = find(req.matches[3]);
    if (req.matches[1] != repo_id_ || req.matches[2] != commit_ || file == nullptr) {
      res.status = 404;
      return;
    }
    if (!file->lfs) {
      res.set_header("ETag", "\"" + etag_of(*file) + "\"");
      return serve_bytes(req, res, *file);
    }
    res.status = 302;
    res.set_header("X-Linked-Etag", "\"" + etag_of(*file) + "\"");
    res.set_header("Location", "/cdn/" + sha256_hex(file->bytes));
  });
}

}  // namespace strata::test
