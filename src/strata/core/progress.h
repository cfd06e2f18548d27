// ProgressReporter: "loading weights 1.2 GB / 3.4 GB, 850 MB/s, ETA 3 s" on stderr while a
// long start-up step moves bytes. On a terminal one line is redrawn in place (at most every
// 100 ms); otherwise a plain line at each quarter, so logs stay readable. The clock and the
// output are injected so tests see exact lines.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace strata {

struct ProgressOptions {
  std::string label = "loading weights";
  bool terminal = false;                         // redraw in place; else a line per quarter
  std::function<double()> clock_s;               // seconds since any fixed point
  std::function<void(std::string_view)> write;  // receives every piece of output
};

class ProgressReporter {
 public:
  explicit ProgressReporter(ProgressOptions options);
  // To stderr, redrawn in place when stderr is a terminal, timed by the steady clock.
  static ProgressReporter to_stderr(std::string label);

  // Total bytes expected (0: unknown, then no percentage or ETA). Starts the clock.
  void start(int64_t total_bytes);
  void advance(int64_t bytes);
  void update(int64_t done_bytes);
  // The last line: bytes, seconds and mean speed. Once; later calls do nothing.
  void finish();

  int64_t done_bytes() const { return done_bytes_; }

 private:
  std::string status_line() const;

  ProgressOptions options_;
  int64_t total_bytes_ = 0;
  int64_t done_bytes_ = 0;
  double start_s_ = 0;
  double last_draw_s_ = -1;
  int next_quarter_ = 1;  // the next quarter a plain line is due at
  bool finished_ = false;
};

// "850 B", "12.3 MB", "3.40 GB": decimal units, three significant digits.
std::string format_bytes(int64_t bytes);

}  // namespace strata
