// A stand-in for the Hugging Face Hub on 127.0.0.1 (random port): the revision API and the
// resolve route, LFS files redirected to a /cdn/ route with their sha256 in X-Linked-Etag,
// small files answered directly with their git blob sha1 as the ETag. Counts what it serves.
#pragma once

#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace strata::test {

struct StandInFile {
  std::string name;
  std::string bytes;
  bool lfs = false;
};

class HubStandIn {
 public:
  HubStandIn(std::string repo_id, std::string commit, std::vector<StandInFile> files);
  ~HubStandIn();

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int num_requests() const { return num_requests_; }
  int num_body_gets() const { return num_body_gets_; }  // GETs that send file bytes
  std::vector<std::string> range_headers() const;
  std::vector<std::string> authorization_headers() const;  // of every request, "" when absent

  int forced_status = 0;          // every route answers this status when set
  std::string wrong_etag_file;    // this file's advertised checksum is off by one digit
  std::string cut_file;           // the first GET of this file stops halfway through the body

 private:
  void add_routes();
  const StandInFile* find(const std::string& name) const;
  std::string etag_of(const StandInFile& file) const;
  void serve_bytes(const httplib::Request& req, httplib::Response& res, const StandInFile& file);

  std::string repo_id_, commit_;
  std::vector<StandInFile> files_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<int> num_requests_{0}, num_body_gets_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> range_headers_, authorization_headers_;
  bool cut_done_ = false;
};

std::string sha256_hex(const std::string& bytes);
std::string git_blob_sha1_hex(const std::string& bytes);
std::string read_whole_file(const std::string& path);

}  // namespace strata::test
