#include <gtest/gtest.h>

#include "strata/core/progress.h"

namespace strata {
namespace {

struct FakeOutput {
  double now_s = 100;
  std::string text;
  ProgressOptions options(bool terminal) {
    return {.label = "loading weights",
            .terminal = terminal,
            .clock_s = [this] { return now_s; },
            .write = [this](std::string_view s) { text += s; }};
  }
};

TEST(ProgressReporter, PlainStreamPrintsALinePerQuarterAndTheTotal) {
  FakeOutput out;
  ProgressReporter progress(out.options(false));
  progress.start(4'000'000'000);
  out.now_s = 101;
  progress.update(500'000'000);  // 12%: no line
  EXPECT_EQ(out.text, "");
  out.now_s = 102;
  progress.update(1'000'000'000);  // 25%: 1 GB in 2 s
  out.now_s = 105;
  progress.update(3'500'000'000);  // jumps past 50% and 75%: one line
  progress.update(3'600'000'000);
  out.now_s = 108;
  progress.update(4'000'000'000);  // 100% is the final line's
  progress.finish();
  progress.finish();
  EXPECT_EQ(out.text,
            "loading weights  25% 1.00 GB / 4.00 GB, 500 MB/s, ETA 6 s\n"
            "loading weights  87% 3.50 GB / 4.00 GB, 700 MB/s, ETA 1 s\n"
            "loading weights: 4.00 GB in 8.0 s (500 MB/s)\n");
}

TEST(ProgressReporter, TerminalRedrawsInPlaceAtMostTenTimesASecond) {
  FakeOutput out;
  ProgressReporter progress(out.options(true));
  progress.start(2'000'000);
  out.now_s = 100.5;
  progress.advance(500'000);
  out.now_s = 100.55;
  progress.advance(500'000);  // 50 ms after the last redraw: skipped
  out.now_s = 101;
  progress.advance(500'000);
  progress.finish();
  EXPECT_EQ(out.text,
            "\rloading weights  25% 500 kB / 2.00 MB, 1.00 MB/s, ETA 2 s\x1b[K"
            "\rloading weights  75% 1.50 MB / 2.00 MB, 1.50 MB/s, ETA 0 s\x1b[K"
            "\r\x1b[Kloading weights: 1.50 MB in 1.0 s (1.50 MB/s)\n");
}

TEST(ProgressReporter, UnknownTotalShowsBytesAndSpeedOnly) {
  FakeOutput out;
  ProgressReporter progress(out.options(true));
  progress.start(0);
  out.now_s = 102;
  progress.update(3'000);
  EXPECT_EQ(out.text, "\rloading weights 3.00 kB, 1.50 kB/s\x1b[K");
}

TEST(FormatBytes, ThreeSignificantDigitsInDecimalUnits) {
  EXPECT_EQ(format_bytes(999), "999 B");
  EXPECT_EQ(format_bytes(1'234), "1.23 kB");
  EXPECT_EQ(format_bytes(12'345'678), "12.3 MB");
  EXPECT_EQ(format_bytes(269'060'000), "269 MB");
  EXPECT_EQ(format_bytes(3'400'000'000), "3.40 GB");
}

}  // namespace
}  // namespace strata
