// Rank 0 of a RankGroup starting its ranks with an explicit program (as the Python module does):
// one that cannot start, or exits before joining, fails the group at once with a message that
// names it, instead of waiting out the rendezvous timeout.
#include <gtest/gtest.h>

#include <chrono>

#include "strata/core/error.h"
#include "strata/parallel/rank_group.h"

namespace strata::test {
namespace {

RankGroupOptions group_of_two(const RankCommand& command) {
  return {.kind = "tensor-parallel", .short_kind = "tp", .membership = {.size = 2, .rank = 0},
          .rank_flags = [](int) { return std::vector<std::string>{}; }, .command = command};
}

TEST(RankGroup, ARankThatExitsBeforeJoiningFailsTheGroupAtOnce) {
  const auto start = std::chrono::steady_clock::now();
  try {
    RankGroup group(group_of_two({.program = "/bin/false", .args = {"false"}}));
    FAIL() << "the group formed without rank 1";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (pid"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exited before reaching the group's rendezvous"), std::string::npos)
        << e.what();
  }
  // The rendezvous timeout is 120 s; the pid check answers within its sleep slices.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(RankGroup, AProgramThatCannotStartIsNamed) {
  try {
    RankGroup group(group_of_two({.program = "/no/such/strata", .args = {"strata", "rank"}}));
    FAIL() << "started a missing program";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("could not start parallel rank 1 as /no/such/strata"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::test
