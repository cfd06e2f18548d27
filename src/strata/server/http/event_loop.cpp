#include "strata/server/http/event_loop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/server/http/response_bytes.h"

namespace strata::server::http {
namespace {

constexpr uint64_t kListenerId = 0;
constexpr uint64_t kWakeId = 1;
constexpr std::chrono::milliseconds kTick{50};           // deadline checks
constexpr std::chrono::milliseconds kAcceptPause{100};   // after running out of descriptors
constexpr int kMaxRefusedOpen = 1024;                    // refused connections still being answered

std::string client_address(const sockaddr_storage& addr) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof(text));
  } else {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
  }
  return text;
}

void add_to_epoll(int epoll_fd, int fd, uint64_t id, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = id;
  STRATA_CHECK(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0);
}

}  // namespace

EventLoop::EventLoop(Listener listener, LoopOptions options, RequestHandlers handlers)
    : listener_(listener), options_(options), handlers_(std::move(handlers)), workers_(options.num_workers) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  STRATA_CHECK(epoll_fd_ >= 0 && wake_fd_ >= 0);
  add_to_epoll(epoll_fd_, listener_.fd, kListenerId, EPOLLIN);
  add_to_epoll(epoll_fd_, wake_fd_, kWakeId, EPOLLIN);
}

EventLoop::~EventLoop() {
  workers_.stop();  // no worker may notify a loop that is gone
  connections_.clear();
  if (listener_.fd >= 0) close(listener_.fd);
  close(wake_fd_);
  close(epoll_fd_);
}

void EventLoop::stop() {
  stop_requested_ = true;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void EventLoop::notify(uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(notify_mutex_);
    notified_.push_back(id);
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = write(wake_fd_, &one, sizeof(one));
}

void EventLoop::run() {
  std::vector<epoll_event> events(256);
  while (true) {
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), static_cast<int>(kTick.count()));
    const Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) on_event(events[i].data.u64, events[i].events, now);
    if (stop_requested_ && !stopping_) begin_stop(now);
    if (now - last_sweep_ >= kTick) sweep(now);
    if (stopping_ && (connections_.empty() || now >= stop_deadline_)) break;
  }
  for (auto& [id, c] : connections_)
    if (c->exchange) c->exchange->mark_gone();
  connections_.clear();
  per_client_.clear();
  workers_.stop();
}

void EventLoop::on_event(uint64_t id, uint32_t events, Clock::time_point now) {
  if (id == kListenerId) return accept_all(now);
  if (id == kWakeId) return take_notifications(now);
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  if (events & (EPOLLERR | EPOLLHUP)) return close_connection(id);
  const size_t room = c.phase == Phase::kLinger ? (64 << 10) : kMaxBufferedBytes - std::min(c.in.size(), kMaxBufferedBytes);
  if ((events & EPOLLIN) && room > 0) {
    if (!read_available(c, room)) return close_connection(id);
  } else if (events & EPOLLRDHUP) {
    c.peer_closed = true;  // not reading (the buffer is full): the hang-up is all we learn
  }
  if ((events & EPOLLOUT) && !write_pending(c, now)) return close_connection(id);
  service(c, now);
}

void EventLoop::take_notifications(Clock::time_point now) {
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = read(wake_fd_, &count, sizeof(count));
  std::vector<uint64_t> ids;
  {
    std::lock_guard<std::mutex> lock(notify_mutex_);
    ids.swap(notified_);
  }
  for (uint64_t id : ids) {
    auto it = connections_.find(id);
    if (it != connections_.end()) service(*it->second, now);
  }
}

void EventLoop::accept_all(Clock::time_point now) {
  while (true) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd = accept4(listener_.fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: leave the rest in the backlog rather than spin on them.
        epoll_event ev{};
        ev.data.u64 = kListenerId;
        epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd, &ev);
        accept_paused_until_ = now + kAcceptPause;
      }
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // stream chunks go out at once
    std::string client = client_address(addr);
    const bool over_total = num_counted_ >= options_.max_connections;
    const bool over_client = per_client_[client] >= options_.max_connections_per_client;
    if (!over_total && !over_client) {
      open_connection(fd, std::move(client), true, now);
      continue;
    }
    if (num_refused_open_ >= kMaxRefusedOpen) {
      close(fd);
      continue;
    }
    Connection& c = open_connection(fd, client, false, now);
    const std::string why = over_total
        ? fmt::format("the server is at its limit of {} connections (--max-connections); retry later",
                      options_.max_connections)
        : fmt::format("too many connections from {} (the limit is {} per client, --max-connections-per-client); "
                      "close some or retry later", client, options_.max_connections_per_client);
    read_available(c, 64 << 10);  // a request already sent is taken, so the close does not reset the answer
    HttpResponse answer = error_response(ApiError(503, why, "service_unavailable"));
    answer.headers.emplace_back("Retry-After", "1");
    queue_bytes(c, response_bytes(answer, false), now);
    c.close_after_write = true;
    service(c, now);
  }
}

Connection& EventLoop::open_connection(int fd, std::string client, bool counted, Clock::time_point now) {
  const uint64_t id = next_id_++;
  auto c = std::make_unique<Connection>(fd, id, std::move(client), options_.parser);
  c->counted = counted;
  c->deadline = now + options_.header_timeout;
  c->last_write = now;
  if (counted) {
    ++num_counted_;
    ++per_client_[c->client];
  } else {
    ++num_refused_open_;
  }
  c->events = EPOLLIN | EPOLLRDHUP;
  add_to_epoll(epoll_fd_, fd, id, c->events);
  return *connections_.emplace(id, std::move(c)).first->second;
}

void EventLoop::close_connection(uint64_t id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  Connection& c = *it->second;
  if (c.exchange) c.exchange->mark_gone();
  if (c.counted) {
    --num_counted_;
    auto client = per_client_.find(c.client);
    if (client != per_client_.end() && --client->second <= 0) per_client_.erase(client);
  } else {
    --num_refused_open_;
  }
  connections_.erase(it);  // closing the socket takes it out of epoll
}

void EventLoop::watch(Connection& c) {
  uint32_t events = 0;
  if (!c.peer_closed) {
    events |= EPOLLRDHUP;
    if (c.phase == Phase::kLinger || c.in.size() < kMaxBufferedBytes) events |= EPOLLIN;
  }
  if (c.num_unsent() > 0) events |= EPOLLOUT;
  if (events == c.events) return;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = c.id;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  c.events = events;
}

void EventLoop::sweep(Clock::time_point now) {
  last_sweep_ = now;
  if (accept_paused_until_ != Clock::time_point{} && now >= accept_paused_until_ && !stopping_) {
    accept_paused_until_ = {};
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenerId;
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, listener_.fd, &ev);
  }
  std::vector<uint64_t> due;
  for (auto& [id, c] : connections_) {
    const bool stalled = c->num_unsent() > 0 && now - c->last_write >= options_.send_timeout;
    const bool closable_now = stopping_ && !c->exchange && c->num_unsent() == 0;
    if (stalled || closable_now || now >= c->deadline) due.push_back(id);
  }
  for (uint64_t id : due) {
    auto it = connections_.find(id);
    if (it != connections_.end()) expire(*it->second, now);
  }
}

void EventLoop::expire(Connection& c, Clock::time_point now) {
  const bool stalled = c.num_unsent() > 0 && now - c.last_write >= options_.send_timeout;
  if (stalled || stopping_ || c.phase == Phase::kIdle || c.phase == Phase::kLinger) return close_connection(c.id);
  if (c.phase == Phase::kBusy || c.close_after_write) {
    c.deadline = Clock::time_point::max();  // answering: only the send deadline applies
    return;
  }
  const bool head = c.phase == Phase::kHead;
  const auto limit = head ? options_.header_timeout : options_.body_timeout;
  refuse(c, FramingError{.status = 408,
                         .message = fmt::format("the request {} did not arrive within {} s; send it faster",
                                                head ? "head" : "body", limit.count() / 1000.0)},
         now);
  service(c, now);
}

void EventLoop::begin_stop(Clock::time_point now) {
  stopping_ = true;
  stop_deadline_ = now + kStopGrace;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listener_.fd, nullptr);
  close(listener_.fd);
  listener_.fd = -1;
  sweep(now);  // closes every connection that is not answering
}

}  // namespace strata::server::http
