// TCP between the ranks of a group on several machines: a listener, a connect that retries until a
// deadline, and a connection whose every read and write has a deadline (time_point::max() waits
// while the peer lives). Keepalive probes notice a peer machine that vanished without a word.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace strata {

using TcpDeadline = std::chrono::steady_clock::time_point;

// How a read or write ended: the peer closed (or reset) the connection, or the deadline passed.
enum class TcpStatus { kDone, kClosed, kTimedOut };

class TcpConnection {
 public:
  TcpConnection() = default;
  TcpConnection(int fd, std::string peer);
  ~TcpConnection();
  TcpConnection(TcpConnection&& other) noexcept;
  TcpConnection& operator=(TcpConnection&& other) noexcept;

  bool is_open() const { return fd_ >= 0; }
  // "host:port" of the other end.
  const std::string& peer() const { return peer_; }
  TcpStatus send_all(const void* data, size_t num_bytes, TcpDeadline deadline);
  TcpStatus receive_all(void* data, size_t num_bytes, TcpDeadline deadline);
  // Why the last read or write returned kClosed ("connection reset by peer", "closed").
  const std::string& closed_reason() const { return closed_reason_; }
  void close();
  // Ends the connection both ways without closing the socket: a read or write of another thread
  // returns kClosed.
  void shut_down();

 private:
  // Waits until the socket is readable (or writable); false at the deadline.
  bool wait_ready(short events, TcpDeadline deadline);

  int fd_ = -1;
  std::string peer_;
  std::string closed_reason_;
};

class TcpListener {
 public:
  // Listens on `host` (an address or name of this machine) and `port` (0: any free port).
  // Throws an Error that names the address when it cannot.
  TcpListener(const std::string& host, int port);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;

  int port() const { return port_; }
  // The next connection, or nullopt at the deadline.
  std::optional<TcpConnection> accept(TcpDeadline deadline);

 private:
  int fd_ = -1;
  int port_ = 0;
};

// Connects to host:port, retrying (the listener may start later) until the deadline; throws an
// Error naming the address, the last failure and `fix` when it cannot.
TcpConnection connect_with_retries(const std::string& host, int port, TcpDeadline deadline, const std::string& fix);

// Seconds as text for messages ("2.5 s").
std::string seconds_text(std::chrono::milliseconds duration);

}  // namespace strata
