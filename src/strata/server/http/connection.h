// Connection: the event loop's state for one client socket: bytes read and not yet parsed,
// the parser, bytes waiting to be written, the exchange in flight, and the deadline of the
// phase it is in. Only the event-loop thread touches it; the exchange is the part a worker
// shares.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "strata/server/http/exchange.h"
#include "strata/server/http/request_parser.h"

namespace strata::server::http {

using Clock = std::chrono::steady_clock;

inline constexpr size_t kMaxBufferedBytes = 64 << 10;  // read ahead while a request is answered
inline constexpr size_t kMaxUnsentBytes = 256 << 10;   // no more is taken from an answer until sent

enum class Phase {
  kIdle,    // no byte of a request yet: closed silently at the deadline (header or keep-alive)
  kHead,    // reading a head: 408 at the deadline
  kBody,    // reading a body: 408 at the deadline
  kBusy,    // a worker answers; reads only buffer pipelined bytes and watch for a hang-up
  kLinger,  // answered with close: our side is shut, and what the client still sends is
            // read and dropped for a moment, so its unread bytes do not reset the answer
};

struct Connection {
  Connection(int fd, uint64_t id, std::string client, ParserLimits limits)
      : fd(fd), id(id), client(std::move(client)), parser(limits) {}
  ~Connection();  // closes the socket
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  size_t num_unsent() const { return out.size() - out_sent; }

  int fd;
  uint64_t id;
  std::string client;          // the peer's IP address
  bool counted = true;         // toward the connection caps (not for a refused one)
  Phase phase = Phase::kIdle;
  Clock::time_point deadline;  // of the phase
  bool served_any = false;     // a keep-alive connection: its header deadline starts at the first byte
  RequestParser parser;
  std::string in;              // read, not yet parsed
  std::string out;             // to write, from out_sent on
  size_t out_sent = 0;
  Clock::time_point last_write;  // when the client last took bytes (or the answer began)
  std::shared_ptr<Exchange> exchange;
  bool close_after_write = false;
  bool peer_closed = false;    // the client shut its side, or the socket failed
  int64_t num_lingered_bytes = 0;
  uint32_t events = 0;         // registered with epoll
};

// Reads what the socket holds, up to `max_bytes`: appended to `in`, or dropped while
// lingering. Sets peer_closed at the end of the stream; false on a socket error.
bool read_available(Connection& c, size_t max_bytes);
// Writes what the socket takes of `out`; false on a socket error.
bool write_pending(Connection& c, Clock::time_point now);
void queue_bytes(Connection& c, std::string_view bytes, Clock::time_point now);

}  // namespace strata::server::http
