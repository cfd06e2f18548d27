#include "strata/engine/rejection_sampler.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {

int32_t draw_from(std::span<const double> weights, double u) {
  double total = 0;
  for (double w : weights) total += w;
  const double target = u * total;
  double sum = 0;
  int32_t last = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    sum += weights[i];
    last = static_cast<int32_t>(i);
    if (sum > target) return last;
  }
  return last;
}

DraftVerification verify_drafts(const DraftVerificationInput& input) {
  const int32_t k = static_cast<int32_t>(input.drafts.size());
  STRATA_CHECK(input.draft_probs.empty() || static_cast<int32_t>(input.draft_probs.size()) == k);
  DraftVerification out;
  for (int32_t j = 0; j < k; ++j) {
    std::vector<double> p = input.target_probs(j);
    const int32_t x = input.drafts[j];
    if (input.draft_probs.empty()) {  // one-hot q: plain sampling's draw, x kept where it matches
      out.tokens.push_back(draw_from(p, input.uniform()));
      if (out.tokens.back() != x) return out;
      ++out.num_accepted;
      continue;
    }
    const double qx = input.draft_probs[j][x];
    const double u = input.uniform();  // drawn for every draft, so a seed replays the same choices
    if (qx > 0 && u * qx < p[x]) {
      out.tokens.push_back(x);
      ++out.num_accepted;
      continue;
    }
    // Rejected: the residual max(0, p - q); all zero only where p == q, which never rejects.
    std::vector<double> residual(p.size());
    double mass = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      residual[i] = std::max(0.0, p[i] - input.draft_probs[j][i]);
      mass += residual[i];
    }
    out.tokens.push_back(draw_from(mass > 0 ? residual : p, input.uniform()));
    return out;
  }
  const std::vector<double> bonus = input.target_probs(k);
  out.tokens.push_back(draw_from(bonus, input.uniform()));
  return out;
}

}  // namespace strata
