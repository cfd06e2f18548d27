// Sockets stay non-blocking: every wait is a poll() bounded by the caller's deadline, so no read,
// write or connect can outlast it.
#include "strata/parallel/tcp_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

// A vanished peer machine is noticed after about idle + interval * count seconds.
constexpr int kKeepAliveIdleS = 10, kKeepAliveIntervalS = 5, kKeepAliveCount = 3;
constexpr std::chrono::milliseconds kRetryPause{200};

struct AddressList {
  addrinfo* first = nullptr;
  ~AddressList() {
    if (first != nullptr) freeaddrinfo(first);
  }
};

// host:port resolved to TCP addresses; an empty list with the resolver's message otherwise.
std::string resolve(const std::string& host, int port, bool passive, AddressList& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &out.first);
  return rc == 0 ? "" : gai_strerror(rc);
}

void set_non_blocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void tune(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // step messages are small and urgent
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepAliveIdleS, sizeof kKeepAliveIdleS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepAliveIntervalS, sizeof kKeepAliveIntervalS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepAliveCount, sizeof kKeepAliveCount);
  set_non_blocking(fd);
}

std::string address_text(const sockaddr* address) {
  char host[NI_MAXHOST] = "?", port[NI_MAXSERV] = "?";
  getnameinfo(address, address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in), host,
              sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV);
  return fmt::format("{}:{}", host, port);
}

int poll_ms(TcpDeadline deadline) {
  if (deadline == TcpDeadline::max()) return 1000;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1000));
}

// Waits for a non-blocking connect to finish; 0 or the errno it failed with.
int wait_connected(int fd, TcpDeadline deadline) {
  pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
  while (poll(&p, 1, poll_ms(deadline)) <= 0)
    if (Clock::now() >= deadline) return ETIMEDOUT;
  int error = 0;
  socklen_t len = sizeof error;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
  return error;
}

// One connect to `address`, waiting until the deadline; the socket, or -1 and why.
int try_connect(const addrinfo& address, TcpDeadline deadline, std::string& why) {
  const int fd = socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC, address.ai_protocol);
  if (fd < 0) {
    why = std::strerror(errno);
    return -1;
  }
  tune(fd);
  int error = connect(fd, address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
  if (error == EINPROGRESS) error = wait_connected(fd, deadline);
  if (error == 0) return fd;
  why = std::strerror(error);
  ::close(fd);
  return -1;
}

}  // namespace

std::string seconds_text(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

TcpConnection::TcpConnection(int fd, std::string peer) : fd_(fd), peer_(std::move(peer)) {}

TcpConnection::~TcpConnection() { close(); }

TcpConnection::TcpConnection(TcpConnection&& other) noexcept { *this = std::move(other); }

TcpConnection& TcpConnection::operator=(TcpConnection&& other) noexcept {
  if (this == &other) return *this;
  close();
  fd_ = std::exchange(other.fd_, -1);
  peer_ = std::move(other.peer_);
  closed_reason_ = std::move(other.closed_reason_);
  return *this;
}

void TcpConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TcpConnection::wait_ready(short events, TcpDeadline deadline) {
  for (;;) {
    pollfd p{.fd = fd_, .events = events, .revents = 0};
    const int rc = poll(&p, 1, poll_ms(deadline));
    if (rc > 0) return true;  // readable, writable, or an error that the next call reports
    if (Clock::now() >= deadline) return false;
  }
}

TcpStatus TcpConnection::send_all(const void* data, size_t num_bytes, TcpDeadline deadline) {
  // A peer that exited has closed its end: say so now, before the bytes vanish into its socket.
  pollfd hangup{.fd = fd_, .events = POLLRDHUP, .revents = 0};
  if (fd_ >= 0 && poll(&hangup, 1, 0) > 0 && (hangup.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
    closed_reason_ = "the connection was closed";
    return TcpStatus::kClosed;
  }
  const auto* at = static_cast<const uint8_t*>(data);
  while (num_bytes > 0) {
    if (fd_ < 0) return TcpStatus::kClosed;
    const ssize_t n = ::send(fd_, at, num_bytes, MSG_NOSIGNAL);
    if (n > 0) {
      at += n;
      num_bytes -= static_cast<size_t>(n);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!wait_ready(POLLOUT, deadline)) return TcpStatus::kTimedOut;
    } else {
      closed_reason_ = std::strerror(errno);
      return TcpStatus::kClosed;
    }
  }
  return TcpStatus::kDone;
}

void TcpConnection::shut_down() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
}

TcpStatus TcpConnection::receive_all(void* data, size_t num_bytes, TcpDeadline deadline) {
  auto* at = static_cast<uint8_t*>(data);
  while (num_bytes > 0) {
    if (fd_ < 0) return TcpStatus::kClosed;
    const ssize_t n = ::recv(fd_, at, num_bytes, 0);
    if (n > 0) {
      at += n;
      num_bytes -= static_cast<size_t>(n);
    } else if (n == 0) {
      closed_reason_ = "the connection was closed";
      return TcpStatus::kClosed;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
      if (!wait_ready(POLLIN, deadline)) return TcpStatus::kTimedOut;
    } else {
      closed_reason_ = std::strerror(errno);
      return TcpStatus::kClosed;
    }
  }
  return TcpStatus::kDone;
}

TcpListener::TcpListener(const std::string& host, int port) {
  AddressList addresses;
  if (const std::string why = resolve(host, port, /*passive=*/true, addresses); !why.empty())
    fail("could not resolve '{}' to listen on port {}: {}; give --master-addr as an address of node 0", host, port, why);
  std::string why = "no address";
  for (const addrinfo* a = addresses.first; a != nullptr && fd_ < 0; a = a->ai_next) {
    fd_ = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    const int one = 1;  // SO_REUSEADDR: a restarted node 0 gets its port back
    if (fd_ >= 0 && setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 && bind(fd_, a->ai_addr, a->ai_addrlen) == 0 && listen(fd_, 128) == 0) break;
    why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  if (fd_ < 0)
    fail("could not listen on {}:{}: {}; --master-addr must be an address of node 0 and --master-port a free port "
         "there", host, port, why);
  set_non_blocking(fd_);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::optional<TcpConnection> TcpListener::accept(TcpDeadline deadline) {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      tune(fd);
      return TcpConnection(fd, address_text(reinterpret_cast<sockaddr*>(&peer)));
    }
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, poll_ms(deadline)) == 0 && Clock::now() >= deadline) return std::nullopt;
  }
}

TcpConnection connect_with_retries(const std::string& host, int port, TcpDeadline deadline, const std::string& fix) {
  const auto start = Clock::now();
  std::string why = "no attempt";
  do {
    AddressList addresses;
    why = resolve(host, port, /*passive=*/false, addresses);
    for (const addrinfo* a = addresses.first; a != nullptr; a = a->ai_next) {
      const int fd = try_connect(*a, std::min(deadline, Clock::now() + std::chrono::seconds(5)), why);
      if (fd >= 0) return TcpConnection(fd, fmt::format("{}:{}", host, port));
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(kRetryPause, std::max(deadline - Clock::now(), Clock::duration{})));
  } while (Clock::now() < deadline);
  fail("could not reach {}:{} within {} ({}): {}", host, port,
       seconds_text(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start)), why, fix);
}

}  // namespace strata
