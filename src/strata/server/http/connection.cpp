#include "strata/server/http/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace strata::server::http {

Connection::~Connection() { close(fd); }

bool read_available(Connection& c, size_t max_bytes) {
  char buffer[16 << 10];
  size_t total = 0;
  while (total < max_bytes) {
    const size_t want = std::min(sizeof(buffer), max_bytes - total);
    const ssize_t n = recv(c.fd, buffer, want, 0);
    if (n > 0) {
      if (c.phase == Phase::kLinger) c.num_lingered_bytes += n;
      else c.in.append(buffer, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < want) return true;
      continue;
    }
    if (n == 0) {
      c.peer_closed = true;
      return true;
    }
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

bool write_pending(Connection& c, Clock::time_point now) {
  while (c.num_unsent() > 0) {
    const ssize_t n = send(c.fd, c.out.data() + c.out_sent, c.num_unsent(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out_sent += static_cast<size_t>(n);
      c.last_write = now;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  if (c.num_unsent() == 0) {
    c.out.clear();
    c.out_sent = 0;
  } else if (c.out_sent > (64 << 10) && c.out_sent * 2 > c.out.size()) {
    c.out.erase(0, c.out_sent);
    c.out_sent = 0;
  }
  return true;
}

void queue_bytes(Connection& c, std::string_view bytes, Clock::time_point now) {
  if (bytes.empty()) return;
  if (c.num_unsent() == 0) c.last_write = now;  // the send deadline counts from here
  c.out.append(bytes);
}

}  // namespace strata::server::http
