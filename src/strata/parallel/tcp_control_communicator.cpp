// The control channel of a group on several machines: a star of TCP links around rank 0 (the
// rendezvous's). Rank 0 sends each message to every rank and relays a broadcast from another
// root; a barrier is a word from every rank to rank 0 and one back. Rank 0 waits for a rank until
// the timeout and names it when it is gone; the others wait for rank 0 while its link lives.
#include <cstring>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/parallel/tcp_control_communicator.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

enum class Collective : int32_t { kBroadcastBytes = 1, kBarrier = 2 };

std::string_view collective_name(int32_t collective) {
  switch (static_cast<Collective>(collective)) {
    case Collective::kBroadcastBytes: return "broadcast_bytes";
    case Collective::kBarrier: return "barrier";
  }
  return "an unknown collective";
}

// Each frame opens with what it belongs to, so ranks in different collectives fail, not mix.
struct FrameHeader {
  int32_t collective = 0;
  int32_t root = -1;
  int64_t num_bytes = 0;
};

class TcpControlCommunicator final : public Communicator {
 public:
  TcpControlCommunicator(RendezvousLinks links, std::chrono::milliseconds timeout)
      : links_(std::move(links)), timeout_(timeout) {}

  int rank() const override { return links_.rank; }
  int world_size() const override { return links_.world_size; }
  void all_reduce_sum(const Tensor&) override { refuse_tensors("all_reduce_sum"); }
  void all_gather_rows(const Tensor&, const Tensor&) override { refuse_tensors("all_gather_rows"); }
  void all_to_all_rows(const Tensor&, const Tensor&) override { refuse_tensors("all_to_all_rows"); }
  void broadcast_bytes(std::vector<uint8_t>& bytes, int root) override;
  void barrier() override;
  void interrupt() override {
    for (TcpConnection& connection : links_.links) connection.shut_down();
  }

 private:
  [[noreturn]] void refuse_tensors(std::string_view what) const {
    fail("the TCP control channel of group '{}' carries host bytes only; {} goes through NCCL or shared memory",
         links_.group_name, what);
  }
  // Rank 0's link to rank r, or another rank's link to rank 0.
  TcpConnection& link(int r) { return links_.links[rank() == 0 ? r : 0]; }
  TcpDeadline deadline() const {
    return timeout_ == std::chrono::milliseconds::max() ? TcpDeadline::max() : Clock::now() + timeout_;
  }
  void send(int to, const FrameHeader& header, const uint8_t* payload);
  // The next frame from `from`, checked against what this rank called; its payload into `bytes`.
  void receive(int from, const FrameHeader& expected, std::vector<uint8_t>& bytes);
  [[noreturn]] void fail_link(int peer, TcpStatus status, std::string_view what);

  RendezvousLinks links_;
  std::chrono::milliseconds timeout_;
};

void TcpControlCommunicator::fail_link(int peer, TcpStatus status, std::string_view what) {
  const int node = peer / links_.ranks_per_node;
  if (rank() != 0)
    fail("rank {}: rank 0 (at {}) is gone during {} ({}); this rank stops too", rank(), links_.master, what,
         link(0).closed_reason());
  if (status == TcpStatus::kTimedOut)
    fail("group '{}': rank {} (node {}, {}) did not answer {} within {}: it may be stuck or its machine gone",
         links_.group_name, peer, node, link(peer).peer(), what, seconds_text(timeout_));
  fail("group '{}': rank {} (node {}, {}) is gone during {} ({})", links_.group_name, peer, node, link(peer).peer(),
       what, link(peer).closed_reason());
}

void TcpControlCommunicator::send(int to, const FrameHeader& header, const uint8_t* payload) {
  const TcpDeadline by = deadline();
  TcpStatus status = link(to).send_all(&header, sizeof header, by);
  if (status == TcpStatus::kDone && header.num_bytes > 0)
    status = link(to).send_all(payload, static_cast<size_t>(header.num_bytes), by);
  if (status != TcpStatus::kDone) fail_link(to, status, collective_name(header.collective));
}

void TcpControlCommunicator::receive(int from, const FrameHeader& expected, std::vector<uint8_t>& bytes) {
  const TcpDeadline by = deadline();
  const std::string_view what = collective_name(expected.collective);
  FrameHeader header;
  TcpStatus status = link(from).receive_all(&header, sizeof header, by);
  if (status != TcpStatus::kDone) fail_link(from, status, what);
  if (header.collective != expected.collective || header.root != expected.root || header.num_bytes < 0)
    fail("group '{}': rank {} called {} (root {}) while rank {} called {} (root {}): every rank must call the same "
         "collectives in the same order",
         links_.group_name, from, collective_name(header.collective), header.root, rank(), what, expected.root);
  bytes.resize(static_cast<size_t>(header.num_bytes));
  if (header.num_bytes > 0) status = link(from).receive_all(bytes.data(), bytes.size(), by);
  if (status != TcpStatus::kDone) fail_link(from, status, what);
}

void TcpControlCommunicator::broadcast_bytes(std::vector<uint8_t>& bytes, int root) {
  STRATA_CHECK(root >= 0 && root < world_size());
  const FrameHeader header{.collective = static_cast<int32_t>(Collective::kBroadcastBytes), .root = root,
                           .num_bytes = static_cast<int64_t>(bytes.size())};
  if (rank() == root && rank() != 0) return send(0, header, bytes.data());
  if (rank() != 0) return receive(0, header, bytes);
  if (root != 0) receive(root, header, bytes);  // relayed to the others below
  FrameHeader out = header;
  out.num_bytes = static_cast<int64_t>(bytes.size());
  for (int r = 1; r < world_size(); ++r)
    if (r != root) send(r, out, bytes.data());
}

void TcpControlCommunicator::barrier() {
  const FrameHeader header{.collective = static_cast<int32_t>(Collective::kBarrier), .root = 0, .num_bytes = 0};
  std::vector<uint8_t> none;
  if (rank() != 0) {
    send(0, header, nullptr);
    return receive(0, header, none);
  }
  for (int r = 1; r < world_size(); ++r) receive(r, header, none);
  for (int r = 1; r < world_size(); ++r) send(r, header, nullptr);
}

}  // namespace

std::unique_ptr<Communicator> make_tcp_control_communicator(RendezvousLinks links, std::chrono::milliseconds timeout) {
  return std::make_unique<TcpControlCommunicator>(std::move(links), timeout);
}

}  // namespace strata
