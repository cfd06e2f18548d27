// The listening socket: non-blocking, SO_REUSEADDR, and a backlog of kListenBacklog so a
// burst of connections waits in the kernel for the event loop instead of being reset.
#pragma once

#include <cstdint>
#include <string>

namespace strata::server::http {

inline constexpr int kListenBacklog = 4096;  // the kernel caps it at net.core.somaxconn

struct Listener {
  int fd = -1;
  int port = 0;  // the bound port (the one picked when 0 was asked)
};

// Throws strata::Error naming the address when it cannot listen.
Listener open_listener(const std::string& host, int port);

// Raises the soft open-file limit towards `wanted` (up to the hard limit); returns the
// limit in force.
int64_t raise_open_file_limit(int64_t wanted);

}  // namespace strata::server::http
