// ServerOptions: the HTTP side of `strata serve` (address, key, limits), built once from
// the flags beside EngineOptions.
#pragma once

#include <cstdint>
#include <string>

namespace strata::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                          // 0: any free port
  std::string api_key;                      // empty: no authentication
  int64_t max_body_bytes = 4 << 20;         // larger bodies get 413
  int num_http_threads = 96;                // connections served at once (each stream holds one)
};

}  // namespace strata::server
