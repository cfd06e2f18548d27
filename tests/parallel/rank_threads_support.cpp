#include "parallel/rank_threads_support.h"

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace strata::test {

void run_rank_threads(int world, const std::function<void(int rank)>& body) {
  std::vector<std::string> errors(world);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] {
      try {
        body(r);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < world; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace strata::test
