// The control channel (rank 0's step messages, barriers) of a group whose ranks run on several
// machines, over the rendezvous's TCP links. It carries host bytes only: broadcast_bytes and
// barrier; the data collectives throw (they go through NCCL, or shared memory on one host).
#pragma once

#include <chrono>
#include <memory>

#include "strata/parallel/communicator.h"
#include "strata/parallel/node_rendezvous.h"

namespace strata {

// timeout: how long rank 0 waits for a rank before it names it and throws; the other ranks pass
// milliseconds::max() to wait on rank 0 while its link lives (a server may idle for days).
std::unique_ptr<Communicator> make_tcp_control_communicator(RendezvousLinks links, std::chrono::milliseconds timeout);

}  // namespace strata
