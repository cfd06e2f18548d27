#include "server/http/raw_client_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include <fmt/format.h>

namespace strata::server::test {

using Clock = std::chrono::steady_clock;

std::string RawResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return value;
  return "";
}

RawClient::RawClient(int port, const char* source_ip) {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (source_ip != nullptr) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    inet_pton(AF_INET, source_ip, &local.sin_addr);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) {
      close();
      return;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) close();
}

RawClient::~RawClient() { close(); }

void RawClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool RawClient::send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool RawClient::fill(Clock::time_point deadline) {
  if (eof_ || fd_ < 0) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return false;
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, static_cast<int>(left)) <= 0) return false;
  char chunk[16384];
  const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

bool RawClient::read_until(std::string_view marker, Clock::time_point deadline, size_t& at) {
  while ((at = buffer_.find(marker)) == std::string::npos)
    if (!fill(deadline)) return false;
  return true;
}

bool RawClient::read_bytes(size_t n, Clock::time_point deadline) {
  while (buffer_.size() < n)
    if (!fill(deadline)) return false;
  return true;
}

std::optional<RawResponse> RawClient::read_response(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  size_t end = 0;
  if (!read_until("\r\n\r\n", deadline, end)) return std::nullopt;
  RawResponse r;
  const std::string head = buffer_.substr(0, end + 2);
  buffer_.erase(0, end + 4);
  r.status = std::atoi(head.substr(9, 3).c_str());
  for (size_t pos = head.find("\r\n") + 2; pos < head.size();) {
    const size_t eol = head.find("\r\n", pos);
    const std::string line = head.substr(pos, eol - pos);
    const size_t colon = line.find(':');
    std::string name = line.substr(0, colon);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    r.headers.emplace_back(name, line.substr(line.find_first_not_of(' ', colon + 1)));
    pos = eol + 2;
  }
  if (r.status == 100) return r;
  if (!r.header("content-length").empty()) {
    const size_t n = std::stoul(r.header("content-length"));
    if (!read_bytes(n, deadline)) return std::nullopt;
    r.body = buffer_.substr(0, n);
    buffer_.erase(0, n);
  } else if (r.header("transfer-encoding") == "chunked") {
    while (true) {
      if (!read_until("\r\n", deadline, end)) return std::nullopt;
      const size_t size = std::stoul(buffer_.substr(0, end), nullptr, 16);
      if (!read_bytes(end + 2 + size + 2, deadline)) return std::nullopt;
      r.body += buffer_.substr(end + 2, size);
      buffer_.erase(0, end + 2 + size + 2);
      if (size == 0) break;
    }
  } else {
    while (fill(deadline)) {
    }
    r.body = std::move(buffer_);
    buffer_.clear();
  }
  return r;
}

bool RawClient::closed_by_server(std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  while (fill(deadline)) {
  }
  return eof_;
}

std::string post_bytes(std::string_view path, std::string_view body, std::string_view extra_headers) {
  return fmt::format("POST {} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}\r\n{}",
                     path, body.size(), extra_headers, body);
}

}  // namespace strata::server::test
