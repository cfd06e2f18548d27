#include "strata/ops/sampling.h"

#include "strata/ops/dispatch.h"

namespace strata::ops {
namespace {

// Host rows are checked here; device rows are checked by the kernel, which samples a row
// with bad indices as token -1 rather than reading out of bounds.
void check_host_rows(const SamplingArgs& args) {
  const int64_t num_logits = args.logits.dim(0);
  const int64_t num_penalty = args.penalty_tokens.defined() ? args.penalty_tokens.dim(0) : 0;
  const auto* rows = args.rows.data_as<const SamplingRow>();
  for (int64_t r = 0; r < args.rows.dim(0); ++r) {
    const SamplingRow& p = rows[r];
    STRATA_CHECK_MSG(p.logits_row >= 0 && p.logits_row < num_logits, "sampling row {}: logits_row {} of {}", r,
                     p.logits_row, num_logits);
    STRATA_CHECK_MSG(p.num_penalty_tokens >= 0 && p.penalty_begin >= 0 &&
                         p.penalty_begin + int64_t{p.num_penalty_tokens} <= num_penalty,
                     "sampling row {}: penalty tokens [{}, +{}) of {}", r, p.penalty_begin, p.num_penalty_tokens,
                     num_penalty);
    STRATA_CHECK_MSG(p.num_top_logprobs >= 0 && p.num_top_logprobs <= kMaxTopLogprobs,
                     "sampling row {}: num_top_logprobs {}", r, p.num_top_logprobs);
  }
}

}  // namespace

void sample_tokens(const SamplingArgs& args) {
  STRATA_CHECK(args.logits.rank() == 2 && args.logits.dtype() == DType::kF32);
  STRATA_CHECK(args.rows.rank() == 2 && args.rows.dim(1) == kSamplingRowWords);
  const int64_t num_rows = args.rows.dim(0);
  const int64_t vocab = args.logits.dim(1);
  STRATA_CHECK_MSG(vocab > 0 && vocab < (int64_t{1} << 23), "sampling: vocab {} out of range", vocab);
  expect_shape(args.token_ids, {num_rows}, "sample_tokens token_ids");
  expect_shape(args.logprobs, {num_rows}, "sample_tokens logprobs");
  expect_shape(args.top_ids, {num_rows, kMaxTopLogprobs}, "sample_tokens top_ids");
  expect_shape(args.top_logprobs, {num_rows, kMaxTopLogprobs}, "sample_tokens top_logprobs");
  if (args.penalty_tokens.defined()) STRATA_CHECK(args.penalty_tokens.rank() == 2 && args.penalty_tokens.dim(1) == 2);
  if (args.penalized.defined()) STRATA_CHECK(args.penalized.rank() == 2 && args.penalized.dim(1) == vocab);
  if (num_rows == 0) return;
  if (args.rows.device().is_cpu()) check_host_rows(args);
  STRATA_DISPATCH(args.logits.device(), cpu::sample_tokens(args), cuda::sample_tokens(args));
}

}  // namespace strata::ops
