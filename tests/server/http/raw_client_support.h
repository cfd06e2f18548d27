// RawClient: a blocking test client over a plain socket, for the HTTP layer's tests: sends
// exact bytes (slowly, pipelined, malformed) and reads exact answers.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::server::test {

struct RawResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;                                          // chunked bodies decoded
  std::string header(std::string_view name) const;
};

class RawClient {
 public:
  // Connects to 127.0.0.1:port, from `source_ip` when given (another loopback address
  // counts as another client).
  explicit RawClient(int port, const char* source_ip = nullptr);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  // False once the socket failed (the server closed or reset it).
  bool send(std::string_view bytes);
  // One response (a 100 Continue counts as one), or nullopt if none came within `timeout`
  // or the connection ended first.
  std::optional<RawResponse> read_response(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // True when the server closes the connection (or resets it) within `timeout`.
  bool closed_by_server(std::chrono::milliseconds timeout);
  void close();

 private:
  // Reads more into buffer_; false at the end of the stream or the deadline.
  bool fill(std::chrono::steady_clock::time_point deadline);
  bool read_until(std::string_view marker, std::chrono::steady_clock::time_point deadline, size_t& at);
  bool read_bytes(size_t n, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

// "POST path" with a JSON body and Content-Length.
std::string post_bytes(std::string_view path, std::string_view body, std::string_view extra_headers = "");

}  // namespace strata::server::test
