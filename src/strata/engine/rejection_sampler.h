// Rejection sampling of speculative drafts (Leviathan et al. 2023; Chen et al. 2023): draft
// x drawn from q is kept with probability min(1, p(x) / q(x)); the first rejected one is
// replaced by a draw from norm(max(0, p - q)), and when all are kept a bonus token comes from
// p. The tokens so produced are distributed exactly as plain sampling from p would give them.
// N-gram drafts have a one-hot q: each position draws from p as plain sampling does (one
// random number a token) and keeps x where the draw is x, with probability p(x) as the rule
// asks; a seeded request then gets plain decoding's tokens whatever drafts a step carried.
// A greedy request's p is one-hot, so only argmax matches pass.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace strata {

struct DraftVerificationInput {
  std::span<const int32_t> drafts;  // k proposed tokens
  // [k][vocab] the distribution each draft was drawn from; empty: one-hot at the draft (n-gram).
  std::span<const std::vector<double>> draft_probs;
  // The target's distribution at verify position j in [0, k], once drafts [0, j) are kept.
  std::function<std::vector<double>(int32_t j)> target_probs;
  std::function<double()> uniform;  // [0, 1), from the request's seeded generator
};

struct DraftVerification {
  int32_t num_accepted = 0;
  std::vector<int32_t> tokens;  // the kept drafts, then the replacement or the bonus token
};

DraftVerification verify_drafts(const DraftVerificationInput& input);

// The token at which the cumulative sum of `weights` (not necessarily normalised) passes
// u * their total; the last positive weight when rounding leaves u past the end.
int32_t draw_from(std::span<const double> weights, double u);

}  // namespace strata
