// EngineLoop's speculative decoding: drafts for the running decode sequences (n-gram lookup,
// the draft model or the MTP module), the verify row's sampling (greedy argmax on the device, or rejection
// sampling on the host for sampled requests and penalties) and what its result keeps.
#include <algorithm>
#include <random>

#include "strata/engine/engine_loop.h"
#include "strata/engine/rejection_sampler.h"
#include "strata/engine/sampling_distribution.h"

namespace strata {
namespace {

// Argmax tasks on the device decide greedy rows without penalties; the rest need the
// distribution at each position, whose penalties count the drafts before it.
bool verifies_on_host(const Sequence& seq) {
  const SamplingParams& params = seq.sampler->params();
  return !params.greedy() || params.has_penalties();
}

}  // namespace

// A sampled sequence drafts only once its first token is known: that token then always comes
// from the prompt's last row, whichever chunking or prefix hit left one prompt token behind (a
// verify row draws it from the seeded generator otherwise, another token than plain decoding's).
int32_t EngineLoop::max_drafts(const Sequence& seq) const {
  const int32_t k = parts_.options.speculative.num_speculative_tokens;
  const bool samples_its_first_token = seq.num_output_tokens() == 0 && !seq.sampler->params().greedy();
  if (k == 0 || seq.num_tokens_behind() != 1 || seq.num_pending_tokens > 0 || seq.constraint != nullptr ||
      seq.request->request.pooling || samples_its_first_token)
    return 0;
  return std::max(0, std::min({k, seq.request->request.max_tokens - seq.num_output_tokens() - 1,
                               parts_.max_model_len - seq.num_tokens() - 1,
                               static_cast<int32_t>(parts_.runner.max_verify_tokens()) - 1}));
}

void EngineLoop::propose_drafts() {
  const SpeculativeOptions& spec = parts_.options.speculative;
  std::vector<DraftRequest> requests;
  for (Sequence* seq : scheduler_.running()) {
    seq->draft_tokens.clear();
    seq->draft_probs.clear();
    const int32_t num = max_drafts(*seq);
    if ((draft_ || mtp_) && !seq->request->request.pooling) {
      requests.push_back({.seq = seq, .max_drafts = num});
    } else if (num > 0) {
      seq->draft_tokens = propose_ngram_drafts(seq->token_ids, spec.ngram(), num);
    }
  }
  if (draft_) {
    draft_->release_except(scheduler_.running());
    draft_->propose(requests);
  }
  if (mtp_) {
    mtp_->release_except(scheduler_.running());
    mtp_->propose(requests);
  }
  if (spec.draft_corruption > 0) corrupt_drafts();
}

void EngineLoop::corrupt_drafts() {
  const int32_t vocab = static_cast<int32_t>(parts_.runner.model().config().vocab_size);
  std::bernoulli_distribution corrupt(parts_.options.speculative.draft_corruption);
  for (Sequence* seq : scheduler_.running()) {
    if (!seq->sampler->params().greedy()) continue;  // a sampled draft must stay the one q drew
    for (int32_t& token : seq->draft_tokens)
      if (corrupt(corruption_rng_)) token = (token + 1) % vocab;
  }
}

EngineLoop::InFlightStep::Verify EngineLoop::launch_verify(Sequence& seq, int32_t num_drafts, const Tensor& logits,
                                                           int64_t logits_row, std::vector<SampleTask>& tasks) {
  InFlightStep::Verify verify{.seq = &seq, .first_task = tasks.size(),
                              .drafts = {seq.draft_tokens.begin(), seq.draft_tokens.begin() + num_drafts}};
  if (verifies_on_host(seq)) {
    verify_on_host(verify, logits, logits_row);
    return verify;
  }
  for (int32_t j = 0; j <= num_drafts; ++j) tasks.push_back({.seq = &seq, .logits_row = logits_row + j});
  return verify;
}

void EngineLoop::verify_on_host(InFlightStep::Verify& verify, const Tensor& logits, int64_t logits_row) {
  Sequence& seq = *verify.seq;
  const int32_t k = static_cast<int32_t>(verify.drafts.size());
  const Tensor host = parts_.runner.backend().to_host(logits.slice_rows(logits_row, logits_row + k + 1));
  const size_t vocab = static_cast<size_t>(host.dim(1));
  auto row = [&](int32_t j) { return std::span<const float>(host.data_as<const float>() + j * vocab, vocab); };
  const SamplingParams& params = seq.sampler->params();
  const std::span<const int32_t> prompt = std::span<const int32_t>(seq.token_ids).first(seq.num_prompt_tokens);
  const std::vector<int32_t> output(seq.token_ids.begin() + seq.num_prompt_tokens, seq.token_ids.end());
  const std::span<const std::vector<double>> draft_probs =
      seq.draft_probs.empty() ? std::span<const std::vector<double>>()
                              : std::span<const std::vector<double>>(seq.draft_probs).first(k);
  const DraftVerification result = verify_drafts(
      {.drafts = verify.drafts,
       .draft_probs = draft_probs,
       .target_probs = [&](int32_t j) {
         std::vector<int32_t> before = output;  // penalties count the drafts kept before position j
         before.insert(before.end(), verify.drafts.begin(), verify.drafts.begin() + j);
         return sampling_distribution(params, {.logits = row(j), .prompt_ids = prompt, .output_ids = before});
       },
       .uniform = [&] { return seq.sampler->next_uniform(); }});
  verify.on_host = true;
  verify.num_accepted = result.num_accepted;
  for (size_t j = 0; j < result.tokens.size(); ++j)
    verify.host_samples.push_back(host_sample_result(params, row(static_cast<int32_t>(j)), result.tokens[j]));
}

void EngineLoop::finish_verify(const InFlightStep::Verify& verify, std::span<const SampleResult> samples) {
  Sequence& seq = *verify.seq;
  if (seq.status == SequenceStatus::kFinished) return;
  const int32_t num_drafts = static_cast<int32_t>(verify.drafts.size());
  int32_t matched = verify.num_accepted;
  if (!verify.on_host)
    while (matched < num_drafts && samples[matched].token_id == verify.drafts[matched]) ++matched;
  // The row fed the last known token (counted at launch) and the drafts; the states after it
  // and the matched drafts are the ones plain decoding would have.
  seq.num_computed_tokens += matched;
  if (seq.ssm_slot >= 0) memory_.roll_back(seq.ssm_slot, num_drafts + 1, 1 + matched);
  if (draft_) draft_->accept(seq, matched);
  if (mtp_) mtp_->accept(seq, matched);
  count_verified(num_drafts, matched);
  for (int32_t j = 0; j <= matched && seq.status != SequenceStatus::kFinished; ++j) {
    seq.token_ids.push_back(kPendingToken);
    append_token(seq, seq.num_tokens() - 1, samples[j]);
  }
}

void EngineLoop::count_verified(int32_t num_drafts, int32_t num_accepted) {
  parts_.stats.update([&](EngineStatsSnapshot& s) {
    ++s.spec_num_drafts_total;
    s.spec_draft_tokens_total += num_drafts;
    s.spec_accepted_tokens_total += num_accepted;
    if (s.spec_accepted_per_pos_total.size() < static_cast<size_t>(num_drafts))
      s.spec_accepted_per_pos_total.resize(num_drafts);
    for (int32_t j = 0; j < num_accepted; ++j) ++s.spec_accepted_per_pos_total[j];
  });
}

}  // namespace strata
