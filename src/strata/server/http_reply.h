// What an endpoint handler returns, independent of the HTTP transport: a status and a body
// (JSON unless it says otherwise), or an event stream the HTTP layer drains into server-sent events. Dropping the
// EventSource (the client left, or the server stops) cancels its engine requests.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace strata::server {

// Whether the client of the request being handled is still connected. The HTTP layer marks
// it gone when the connection drops (or the server stops), so a handler that waits on the
// engine can cancel its work instead of generating for nobody.
class ClientWatch {
 public:
  bool gone() const { return gone_.load(std::memory_order_acquire); }
  void mark_gone() { gone_.store(true, std::memory_order_release); }

 private:
  std::atomic<bool> gone_{false};
};

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Appends the next events (possibly none, after a short wait) to `out`; false once the
  // stream is complete and `out` holds its last events.
  virtual bool next(std::string& out) = 0;
};

struct HttpReply {
  int status = 200;
  std::string body;                     // when events is null
  std::string content_type = "application/json";
  std::shared_ptr<EventSource> events;  // text/event-stream
  std::vector<std::pair<std::string, std::string>> headers;  // extra, e.g. x-request-id
};

}  // namespace strata::server
