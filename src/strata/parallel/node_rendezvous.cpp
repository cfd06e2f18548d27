// The rendezvous messages are length-prefixed JSON (a hello from each rank, one answer from rank
// 0): small, read once, and a stranger on the port (or another version) fails to parse instead
// of being trusted.
#include "strata/parallel/node_rendezvous.h"

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/logging.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::string_view kHelloTag = "strata-rendezvous-1";
constexpr uint32_t kMaxMessageBytes = 1 << 20;

// Hostname and boot id: two processes with the same one share a kernel, so its shared memory.
std::string this_host() {
  char name[256] = "";
  gethostname(name, sizeof name - 1);
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string boot_id;
  std::getline(boot, boot_id);
  return fmt::format("{} (boot {})", name, boot_id);
}

bool send_json(TcpConnection& link, const json& message, TcpDeadline deadline) {
  const std::string text = message.dump();
  const auto size = static_cast<uint32_t>(text.size());
  return link.send_all(&size, sizeof size, deadline) == TcpStatus::kDone &&
         link.send_all(text.data(), text.size(), deadline) == TcpStatus::kDone;
}

// The next message, or nullopt when the link closed, the deadline passed or it is not ours.
std::optional<json> receive_json(TcpConnection& link, TcpDeadline deadline) {
  uint32_t size = 0;
  if (link.receive_all(&size, sizeof size, deadline) != TcpStatus::kDone || size > kMaxMessageBytes) return std::nullopt;
  std::string text(size, '\0');
  if (link.receive_all(text.data(), size, deadline) != TcpStatus::kDone) return std::nullopt;
  json message = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded() || !message.is_object()) return std::nullopt;
  return message;
}

std::string ranks_text(int first, int last) {
  return first == last ? fmt::format("rank {}", first) : fmt::format("ranks {}..{}", first, last);
}

// Which flag differs between rank 0's node and `node`, as a sentence; empty when none does.
std::string flag_difference(const NodeOptions& mine, const std::map<std::string, std::string>& their_flags, int node) {
  for (const auto& [flag, value] : mine.shared_flags) {
    const auto it = their_flags.find(flag);
    if (it == their_flags.end()) return fmt::format("node {} did not say its {}", node, flag);
    if (it->second != value)
      return fmt::format("node {} was started with {} {}, node 0 with {} {}: start every node with the same model "
                         "and parallel flags",
                         node, flag, it->second, flag, value);
  }
  return "";
}

// A rank's hello: who it is, where it runs, with which flags.
struct Hello {
  int rank = -1, node = -1;
  std::string host;
  std::map<std::string, std::string> flags;
};

std::optional<Hello> parse_hello(const std::optional<json>& message) {
  if (!message || message->value("strata", "") != kHelloTag) return std::nullopt;
  try {
    Hello hello{.rank = message->at("rank").get<int>(), .node = message->at("node_rank").get<int>(),
                .host = message->at("host").get<std::string>()};
    for (const json& pair : message->at("flags")) hello.flags[pair.at(0).get<std::string>()] = pair.at(1).get<std::string>();
    return hello;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

class Host {
 public:
  Host(TcpListener& listener, const RendezvousOptions& options);
  RendezvousLinks run();

 private:
  // Takes one connection's hello: true for a rank of the group, false for a stranger (ignored);
  // refuses them all when the rank does not fit the group.
  bool admit(TcpConnection link);
  std::string refusal(const Hello& hello, const TcpConnection& link) const;
  [[noreturn]] void refuse_all(const std::string& why);
  std::string missing_ranks() const;

  TcpListener& listener_;
  const RendezvousOptions& options_;
  RendezvousLinks out_;
  TcpDeadline deadline_;
  std::string host_;
};

Host::Host(TcpListener& listener, const RendezvousOptions& options)
    : listener_(listener), options_(options), deadline_(Clock::now() + options.nodes.timeout),
      host_(options.host.empty() ? this_host() : options.host) {
  out_ = {.rank = 0, .world_size = options.world_size, .ranks_per_node = ranks_per_node(options.nodes, options.world_size),
          .group_name = options.group_name,
          .master = fmt::format("{}:{}", options.nodes.master_addr, listener.port())};
  out_.links.resize(options.world_size);
}

RendezvousLinks Host::run() {
  int num_arrived = 1;
  while (num_arrived < out_.world_size) {
    std::optional<TcpConnection> link = listener_.accept(deadline_);
    if (!link)
      refuse_all(fmt::format("{} did not arrive at {} within {}: start every node with the same --nnodes, "
                             "--master-addr and --master-port and its own --node-rank, and check that it can "
                             "reach this address",
                             missing_ranks(), out_.master, seconds_text(options_.nodes.timeout)));
    if (admit(std::move(*link))) ++num_arrived;
  }
  const json answer = {{"ok", true}, {"group_name", out_.group_name}};
  for (int r = 1; r < out_.world_size; ++r)
    if (!send_json(out_.links[r], answer, deadline_))
      refuse_all(fmt::format("rank {} left {} before the start completed ({})", r, out_.master,
                             out_.links[r].closed_reason()));
  return std::move(out_);
}

bool Host::admit(TcpConnection link) {
  // A stranger that connects and says nothing holds the others up for a few seconds at most.
  const std::optional<Hello> hello =
      parse_hello(receive_json(link, std::min(deadline_, Clock::now() + std::chrono::seconds(10))));
  if (!hello) {
    spdlog::warn("multi-node start: {} connected to {} but is not a strata rank of this version; ignored", link.peer(),
                 out_.master);
    return false;
  }
  const std::string why = refusal(*hello, link);
  const bool in_group = hello->rank > 0 && hello->rank < out_.world_size;
  if (in_group && !out_.links[hello->rank].is_open()) out_.links[hello->rank] = std::move(link);  // hears a refusal too
  if (!why.empty()) refuse_all(why);
  return true;
}

std::string Host::refusal(const Hello& hello, const TcpConnection& link) const {
  const int rank = hello.rank, node = hello.node;
  if (node < 0 || node >= options_.nodes.num_nodes || rank <= 0 || rank >= out_.world_size)
    return fmt::format("{} says it is rank {} of node {}, outside {} nodes of {} ranks: start every node with the "
                       "same --nnodes and parallel sizes", link.peer(), rank, node, options_.nodes.num_nodes,
                       out_.world_size);
  if (out_.links[rank].is_open())
    return fmt::format("two processes (from {} and {}) say they are rank {}: two nodes were started with "
                       "--node-rank {}", out_.links[rank].peer(), link.peer(), rank, node);
  if (std::string why = flag_difference(options_.nodes, hello.flags, node); !why.empty()) return why;
  if (options_.one_host && hello.host != host_)
    return fmt::format("node {} runs on {}, node 0 on {}: on the CPU the ranks' collectives go through shared "
                       "memory, which only one machine holds; start every node on one machine, or run on GPUs "
                       "(NCCL crosses machines)", node, hello.host, host_);
  return "";
}

std::string Host::missing_ranks() const {
  std::vector<std::string> parts;
  const int per_node = out_.ranks_per_node;
  for (int node = 0; node < options_.nodes.num_nodes; ++node) {
    std::vector<int> missing;
    for (int r = std::max(1, node * per_node); r < (node + 1) * per_node; ++r)
      if (!out_.links[r].is_open()) missing.push_back(r);
    if (missing.empty()) continue;
    if (std::ssize(missing) == per_node) {
      parts.push_back(fmt::format("node {} ({})", node, ranks_text(node * per_node, (node + 1) * per_node - 1)));
    } else {
      parts.push_back(fmt::format("rank{} {} of node {}", missing.size() > 1 ? "s" : "", fmt::join(missing, ", "), node));
    }
  }
  return fmt::format("{}", fmt::join(parts, " and "));
}

void Host::refuse_all(const std::string& why) {
  const json answer = {{"ok", false}, {"error", why}};
  const TcpDeadline soon = Clock::now() + std::chrono::seconds(2);
  for (int r = 1; r < out_.world_size; ++r)
    if (out_.links[r].is_open()) send_json(out_.links[r], answer, soon);
  fail("multi-node start: {}", why);
}

}  // namespace

int ranks_per_node(const NodeOptions& nodes, int world_size) {
  if (nodes.num_nodes < 1) fail("--nnodes must be at least 1, not {}", nodes.num_nodes);
  if (nodes.node_rank < 0 || nodes.node_rank >= nodes.num_nodes)
    fail("--node-rank {} is not one of the {} nodes: give 0 to {}", nodes.node_rank, nodes.num_nodes,
         nodes.num_nodes - 1);
  if (world_size % nodes.num_nodes != 0)
    fail("--nnodes {} does not split the {} ranks (--tensor-parallel-size x --pipeline-parallel-size) evenly: give "
         "a number of nodes that divides them", nodes.num_nodes, world_size);
  return world_size / nodes.num_nodes;
}

RendezvousLinks host_rendezvous(TcpListener& listener, const RendezvousOptions& options) {
  STRATA_CHECK(options.rank == 0);
  return Host(listener, options).run();
}

RendezvousLinks join_rendezvous(const RendezvousOptions& options) {
  STRATA_CHECK(options.rank > 0);
  const NodeOptions& nodes = options.nodes;
  RendezvousLinks out{.rank = options.rank, .world_size = options.world_size,
                      .ranks_per_node = ranks_per_node(nodes, options.world_size),
                      .master = fmt::format("{}:{}", nodes.master_addr, nodes.master_port)};
  const TcpDeadline deadline = Clock::now() + nodes.timeout;
  out.links.push_back(connect_with_retries(
      nodes.master_addr, nodes.master_port, deadline,
      fmt::format("start node 0 with --master-addr {} --master-port {}, and check that this machine reaches it",
                  nodes.master_addr, nodes.master_port)));
  const json hello = {{"strata", kHelloTag}, {"rank", options.rank}, {"node_rank", nodes.node_rank},
                      {"host", options.host.empty() ? this_host() : options.host}, {"flags", nodes.shared_flags}};
  // Rank 0 answers by its own deadline, which began before it took this connection.
  const TcpDeadline answer_by = Clock::now() + nodes.timeout + std::chrono::seconds(5);
  if (!send_json(out.links[0], hello, answer_by))
    fail("multi-node start: rank 0 at {} closed the connection before rank {} could say who it is", out.master,
         options.rank);
  const std::optional<json> answer = receive_json(out.links[0], answer_by);
  if (!answer)
    fail("multi-node start: rank 0 at {} gave no answer to rank {} within {} ({}): it may have stopped, or not "
         "every node arrived", out.master, options.rank, seconds_text(nodes.timeout),
         out.links[0].closed_reason().empty() ? "no reply" : out.links[0].closed_reason());
  if (!answer->value("ok", false)) fail("multi-node start: {}", answer->value("error", std::string("refused by rank 0")));
  out.group_name = answer->value("group_name", "");
  return out;
}

RendezvousLinks rendezvous(const RendezvousOptions& options) {
  if (options.rank > 0) return join_rendezvous(options);
  TcpListener listener(options.nodes.master_addr, options.nodes.master_port);
  return host_rendezvous(listener, options);
}

}  // namespace strata
