// ServerOptions: the HTTP side of `strata serve` (address, key, limits), built once from
// the flags beside EngineOptions. The limits bound what any client can hold: a socket for
// at most the timeouts below, never a thread before its request is complete.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/server/reasoning_parser.h"

namespace strata::server {

// Image input (models with a vision tower): what one request may send.
struct ImageInputOptions {
  int32_t max_images_per_prompt = 8;       // --limit-mm-per-prompt '{"image": N}'; more get 400
  int64_t max_image_pixels = 4096 * 4096;  // decoded width x height (--max-image-pixels); larger get 400
  std::string allowed_local_media_path;    // file:// URLs must lie under it; empty: file:// refused
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                          // 0: any free port
  std::string api_key;                      // empty: no authentication
  int64_t max_body_bytes = 4 << 20;         // larger bodies get 413 (chunked ones too)
  int64_t max_header_bytes = 64 << 10;      // a larger request line + headers gets 431
  int num_http_threads = 96;                // requests answered at once (each stream holds one)
  double header_timeout_s = 10;             // connect (or a keep-alive request's first byte) to the end of the head: 408 after
  double body_timeout_s = 30;               // end of the head to the end of the body: 408 after
  double keep_alive_timeout_s = 5;          // an idle connection between requests is closed after
  double send_timeout_s = 30;               // a client that takes no byte of its answer for this long is dropped
  int max_connections = 1024;               // open at once; more get 503
  int max_connections_per_client = 64;      // from one IP address; more get 503
  std::vector<std::string> allowed_origins; // CORS: browser origins let in, or "*"; empty: CORS off
  bool ignore_unknown_fields = false;       // request fields nobody defines: ignored (logged once) instead of 400
  bool ui = true;                           // GET / serves the chat page (--no-ui: 404 there)
  ReasoningFormat reasoning_parser = ReasoningFormat::kNone;  // how chat output marks thinking (--reasoning-parser)
  ImageInputOptions images;
};

}  // namespace strata::server
