#include "strata/bench/sse_reader.h"

namespace strata::bench {

void SseReader::feed(std::string_view bytes, const OnData& on_data) {
  for (char c : bytes)
    if (c != '\r') pending_ += c;  // CRLF and LF line ends read alike
  size_t start = 0;
  for (size_t end = pending_.find("\n\n"); end != std::string::npos; end = pending_.find("\n\n", start)) {
    take_event(std::string_view(pending_).substr(start, end - start), on_data);
    start = end + 2;
  }
  pending_.erase(0, start);
}

void SseReader::take_event(std::string_view event, const OnData& on_data) const {
  std::string data;
  bool any = false;
  while (!event.empty()) {
    const size_t eol = std::min(event.find('\n'), event.size());
    std::string_view line = event.substr(0, eol);
    event.remove_prefix(std::min(eol + 1, event.size()));
    if (!line.starts_with("data:")) continue;
    line.remove_prefix(5);
    if (line.starts_with(' ')) line.remove_prefix(1);
    if (any) data += '\n';
    data += line;
    any = true;
  }
  if (any) on_data(data);
}

}  // namespace strata::bench
