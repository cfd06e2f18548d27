#include "strata/server/random_id.h"

#include <random>

namespace strata::server {

std::string random_alnum(int length) {
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(0, static_cast<int>(sizeof(kChars)) - 2);
  std::string out(static_cast<size_t>(length), 'a');
  for (char& c : out) c = kChars[pick(rng)];
  return out;
}

}  // namespace strata::server
