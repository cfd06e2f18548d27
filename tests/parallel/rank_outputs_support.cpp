#include "parallel/rank_outputs_support.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/parallel/local_ranks.h"
#include "test_support.h"

namespace strata::test {

struct RankOutputs::Report {
  char error[1024];
  double seconds;
};

namespace {
constexpr int64_t kReportBytes = 1088;  // a Report rounded to cache lines
static_assert(sizeof(std::atomic<int>) <= 64);
}  // namespace

RankOutputs::RankOutputs(int world_size, int64_t bytes_per_rank)
    : world_size_(world_size), bytes_per_rank_((bytes_per_rank + 63) / 64 * 64) {
  static_assert(sizeof(Report) <= kReportBytes);
  num_bytes_ = 64 + world_size * (kReportBytes + bytes_per_rank_);
  void* p = mmap(nullptr, num_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  STRATA_CHECK(p != MAP_FAILED);
  base_ = static_cast<uint8_t*>(p);
  new (base_) std::atomic<int>(0);
}

RankOutputs::~RankOutputs() { munmap(base_, num_bytes_); }

uint8_t* RankOutputs::data(int rank) const { return base_ + 64 + world_size_ * kReportBytes + rank * bytes_per_rank_; }

RankOutputs::Report& RankOutputs::report(int rank) const {
  return *reinterpret_cast<Report*>(base_ + 64 + rank * kReportBytes);
}

void RankOutputs::set_error(int rank, const std::string& message) {
  std::snprintf(report(rank).error, sizeof(Report::error), "%s", message.c_str());
}

std::string RankOutputs::error(int rank) const { return report(rank).error; }
double& RankOutputs::seconds(int rank) { return report(rank).seconds; }
std::atomic<int>& RankOutputs::counter() { return *reinterpret_cast<std::atomic<int>*>(base_); }

std::vector<int> run_ranks(int world_size, RankOutputs& outputs, const std::function<void(int rank)>& body,
                           std::chrono::milliseconds time_limit) {
  const auto child = [&](int rank) {
    try {
      body(rank);
      return 0;
    } catch (const Error& e) {
      outputs.set_error(rank, e.what());
      return 1;
    }
  };
  return run_local_ranks(world_size, child, time_limit);
}

CommunicatorOptions group_options(int world_size, int64_t slot_bytes, std::chrono::milliseconds timeout) {
  return {.rank = 0,
          .world_size = world_size,
          .group_name = per_test_name(fmt::format("{}", getpid())),
          .timeout = timeout,
          .slot_bytes = slot_bytes};
}

bool segment_exists(const std::string& group_name) {
  const int fd = shm_open(("/strata-" + group_name).c_str(), O_RDONLY, 0);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

}  // namespace strata::test
