#include "strata/core/progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

namespace strata {

namespace {

constexpr double kMinRedrawSeconds = 0.1;

std::string format_rate(double bytes_per_s) {
  return format_bytes(static_cast<int64_t>(bytes_per_s)) + "/s";
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b < 1e3) return fmt::format("{} B", bytes);
  const char* units[] = {"kB", "MB", "GB", "TB"};
  double value = b / 1e3;
  int unit = 0;
  while (value >= 1e3 && unit < 3) {
    value /= 1e3;
    ++unit;
  }
  const int decimals = value < 10 ? 2 : value < 100 ? 1 : 0;
  return fmt::format("{:.{}f} {}", value, decimals, units[unit]);
}

ProgressReporter::ProgressReporter(ProgressOptions options) : options_(std::move(options)) {}

ProgressReporter ProgressReporter::to_stderr(std::string label) {
  return ProgressReporter(ProgressOptions{
      .label = std::move(label),
      .terminal = isatty(fileno(stderr)) != 0,
      .clock_s = [] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
      },
      .write =
          [](std::string_view text) {
            std::fwrite(text.data(), 1, text.size(), stderr);
            std::fflush(stderr);
          },
  });
}

void ProgressReporter::start(int64_t total_bytes) {
  total_bytes_ = total_bytes;
  start_s_ = options_.clock_s();
}

void ProgressReporter::advance(int64_t bytes) { update(done_bytes_ + bytes); }

void ProgressReporter::update(int64_t done_bytes) {
  if (finished_) return;
  done_bytes_ = done_bytes;
  const double now = options_.clock_s();
  if (options_.terminal) {
    if (last_draw_s_ >= 0 && now - last_draw_s_ < kMinRedrawSeconds) return;
    last_draw_s_ = now;
    options_.write("\r" + status_line() + "\x1b[K");  // clears what a longer line left
    return;
  }
  if (total_bytes_ <= 0 || next_quarter_ > 3) return;
  const int quarter = static_cast<int>(4 * done_bytes_ / total_bytes_);
  if (quarter < next_quarter_) return;
  next_quarter_ = quarter + 1;  // a jump over several quarters prints one line
  if (quarter < 4) options_.write(status_line() + "\n");
}

std::string ProgressReporter::status_line() const {
  const double elapsed = options_.clock_s() - start_s_;
  const double rate = elapsed > 0 ? static_cast<double>(done_bytes_) / elapsed : 0;
  if (total_bytes_ <= 0) return fmt::format("{} {}, {}", options_.label, format_bytes(done_bytes_), format_rate(rate));
  const int percent = static_cast<int>(100 * done_bytes_ / total_bytes_);
  std::string line = fmt::format("{} {:3d}% {} / {}", options_.label, percent, format_bytes(done_bytes_),
                                 format_bytes(total_bytes_));
  if (rate <= 0) return line;
  const double eta = static_cast<double>(std::max<int64_t>(total_bytes_ - done_bytes_, 0)) / rate;
  return line + fmt::format(", {}, ETA {:.0f} s", format_rate(rate), eta);
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  const double elapsed = options_.clock_s() - start_s_;
  const double rate = elapsed > 0 ? static_cast<double>(done_bytes_) / elapsed : 0;
  options_.write(fmt::format("{}{}: {} in {:.1f} s ({})\n", options_.terminal ? "\r\x1b[K" : "", options_.label,
                             format_bytes(done_bytes_), elapsed, format_rate(rate)));
}

}  // namespace strata
