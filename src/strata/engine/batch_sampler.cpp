#include "strata/engine/batch_sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "strata/core/error.h"
#include "strata/ops/logit_bias.h"
#include "strata/ops/logits_mask.h"

namespace strata {
namespace {

std::span<const int32_t> prompt_of(const Sequence& seq) {
  return std::span<const int32_t>(seq.token_ids).first(seq.num_prompt_tokens);
}
std::span<const int32_t> output_of(const Sequence& seq) {
  return std::span<const int32_t>(seq.token_ids).subspan(seq.num_prompt_tokens);
}

}  // namespace

SampleTicket BatchSampler::launch(const Tensor& logits, std::vector<SampleTask> tasks) {
  SampleTicket ticket;
  ticket.tasks = std::move(tasks);
  if (ticket.tasks.empty()) return ticket;
  if (on_device()) {
    launch_on_device(logits, ticket);
  } else {
    launch_on_host(logits, ticket);
  }
  return ticket;
}

std::vector<SampleResult> BatchSampler::collect(SampleTicket& ticket) {
  if (ticket.half < 0) return std::move(ticket.results);
  ticket.copied->wait();
  const int64_t n = static_cast<int64_t>(ticket.tasks.size());
  constexpr int64_t kTop = ops::kMaxTopLogprobs;
  const int32_t* ids = staging_[ticket.half].data_as<const int32_t>();
  const float* logprobs = staging_[ticket.half].data_as<const float>() + n;
  std::vector<SampleResult> results;
  for (int64_t i = 0; i < n; ++i)
    results.push_back(make_sample_result(ticket.tasks[i].seq->sampler->params(), ids[i], logprobs[i],
                                         ids + 2 * n + i * kTop, logprobs + n + n * kTop + i * kTop));
  half_in_use_[ticket.half] = false;
  ticket.half = -1;
  return results;
}

void BatchSampler::discard(SampleTicket& ticket, bool wait_for_device) {
  if (ticket.half < 0) return;
  if (wait_for_device && ticket.copied) ticket.copied->wait();
  half_in_use_[ticket.half] = false;
  ticket.half = -1;
}

// Each sequence samples a copy of its row: the Sampler applies penalties in place and n > 1
// choices share the row.
void BatchSampler::launch_on_host(const Tensor& logits, SampleTicket& ticket) {
  const int64_t vocab = logits.dim(1);
  std::vector<float> row;
  ticket.sampled_ids = Tensor::host(DType::kI32, {static_cast<int64_t>(ticket.tasks.size())});
  for (size_t i = 0; i < ticket.tasks.size(); ++i) {
    const SampleTask& task = ticket.tasks[i];
    const float* src = logits.data_as<const float>() + task.logits_row * vocab;
    row.assign(src, src + vocab);
    for (const LogitBias& b : task.seq->sampler->params().logit_bias)
      if (b.token_id < vocab) row[b.token_id] += b.bias;
    if (!task.allowed.empty())
      for (int64_t v = 0; v < vocab; ++v)
        if (((task.allowed[v / 32] >> (v % 32)) & 1u) == 0) row[v] = -INFINITY;
    ticket.results.push_back(task.seq->sampler->sample(row, prompt_of(*task.seq), output_of(*task.seq)));
    ticket.sampled_ids.data_as<int32_t>()[i] = ticket.results.back().token_id;
  }
}

void BatchSampler::mask_on_device(const Tensor& logits, std::span<const SampleTask> tasks) {
  std::vector<int32_t> rows, bits;
  for (const SampleTask& task : tasks) {
    if (task.allowed.empty()) continue;
    rows.push_back(static_cast<int32_t>(task.logits_row));
    bits.insert(bits.end(), task.allowed.begin(), task.allowed.end());
  }
  if (rows.empty()) return;
  const int64_t m = static_cast<int64_t>(rows.size()), words = static_cast<int64_t>(bits.size()) / m;
  reserve(mask_inputs_, m + m * words, true);
  rows.insert(rows.end(), bits.begin(), bits.end());
  backend_.copy(mask_inputs_.slice_rows(0, static_cast<int64_t>(rows.size())),
                Tensor::view(rows.data(), DType::kI32, {static_cast<int64_t>(rows.size())}));
  ops::mask_logits(logits, mask_inputs_.slice_rows(0, m), mask_inputs_.slice_rows(m, m + m * words).reshape({m, words}));
}

// n > 1 choices share their first logits row (and their bias): each row is biased once.
void BatchSampler::bias_on_device(const Tensor& logits, std::span<const SampleTask> tasks) {
  std::vector<int32_t> packed;  // (row, token) pairs, then the biases' bits
  std::vector<float> biases;
  std::vector<int64_t> biased_rows;
  for (const SampleTask& task : tasks) {
    const std::vector<LogitBias>& bias = task.seq->sampler->params().logit_bias;
    if (bias.empty() || std::find(biased_rows.begin(), biased_rows.end(), task.logits_row) != biased_rows.end())
      continue;
    biased_rows.push_back(task.logits_row);
    for (const LogitBias& b : bias) {
      packed.insert(packed.end(), {static_cast<int32_t>(task.logits_row), b.token_id});
      biases.push_back(b.bias);
    }
  }
  if (biases.empty()) return;
  const int64_t k = static_cast<int64_t>(biases.size());
  packed.resize(static_cast<size_t>(3 * k));
  std::memcpy(packed.data() + 2 * k, biases.data(), static_cast<size_t>(k) * sizeof(float));
  reserve(bias_inputs_, 3 * k, true);
  backend_.copy(bias_inputs_.slice_rows(0, 3 * k), Tensor::view(packed.data(), DType::kI32, {3 * k}));
  ops::add_logit_bias(logits, bias_inputs_.slice_rows(0, 2 * k).reshape({k, 2}),
                      Tensor::view(bias_inputs_.data_as<int32_t>() + 2 * k, DType::kF32, {k}, bias_inputs_.device()));
}

void BatchSampler::reserve(Tensor& t, int64_t words, bool device) {
  if (t.defined() && t.numel() >= words) return;
  const int64_t grown = std::max<int64_t>(words, t.defined() ? 2 * t.numel() : 4096);
  t = device ? backend_.empty(DType::kI32, {grown}) : backend_.pinned_host(DType::kI32, {grown});
}

// One upload of the rows and penalty tokens, one launch, one queued download of the results
// (the top logprobs only when some row asked for them).
void BatchSampler::launch_on_device(const Tensor& logits, SampleTicket& ticket) {
  const std::vector<SampleTask>& tasks = ticket.tasks;
  const int64_t n = static_cast<int64_t>(tasks.size()), vocab = logits.dim(1);
  const int half = next_half_;
  STRATA_CHECK_MSG(!half_in_use_[half], "a third sampling launch before the first was collected");
  next_half_ ^= 1;
  bias_on_device(logits, tasks);
  mask_on_device(logits, tasks);
  rows_.clear();
  penalties_.clear();
  int32_t num_penalized = 0;
  for (const SampleTask& task : tasks) {
    Sampler& sampler = *task.seq->sampler;
    ops::SamplingRow row = make_sampling_row(sampler.params(), sampler.next_random_bits(), prompt_of(*task.seq),
                                             output_of(*task.seq), penalties_);
    row.logits_row = static_cast<int32_t>(task.logits_row);
    if (row.num_penalty_tokens > 0) row.penalized_row = num_penalized++;
    ticket.any_top = ticket.any_top || row.num_top_logprobs > 0;
    rows_.push_back(row);
  }
  const int64_t row_words = n * ops::kSamplingRowWords, penalty_words = 2 * static_cast<int64_t>(penalties_.size());
  const int64_t output_words = n * (2 + 2 * ops::kMaxTopLogprobs);
  reserve(staging_[half], std::max(row_words + penalty_words, output_words), false);
  reserve(inputs_, row_words + penalty_words, true);
  reserve(outputs_, output_words, true);
  if (num_penalized > 0 && (!penalized_.defined() || penalized_.dim(0) < num_penalized || penalized_.dim(1) != vocab))
    penalized_ = backend_.empty(DType::kF32, {num_penalized, vocab});
  Tensor& staging = staging_[half];
  std::memcpy(staging.data(), rows_.data(), row_words * 4);
  if (penalty_words > 0) std::memcpy(staging.data_as<int32_t>() + row_words, penalties_.data(), penalty_words * 4);
  const int64_t input_words = row_words + penalty_words;
  backend_.copy_async(inputs_.slice_rows(0, input_words), staging.slice_rows(0, input_words));
  int32_t* out = outputs_.data_as<int32_t>();
  const Device device = outputs_.device();
  constexpr int64_t kTop = ops::kMaxTopLogprobs;
  ops::sample_tokens(ops::SamplingArgs{
      .logits = logits,
      .rows = inputs_.slice_rows(0, row_words).reshape({n, ops::kSamplingRowWords}),
      .penalty_tokens = penalty_words > 0 ? inputs_.slice_rows(row_words, input_words)
                                                .reshape({penalty_words / 2, 2}) : Tensor(),
      .penalized = num_penalized > 0 ? penalized_ : Tensor(),
      .token_ids = Tensor::view(out, DType::kI32, {n}, device),
      .logprobs = Tensor::view(out + n, DType::kF32, {n}, device),
      .top_ids = Tensor::view(out + 2 * n, DType::kI32, {n, kTop}, device),
      .top_logprobs = Tensor::view(out + 2 * n + n * kTop, DType::kF32, {n, kTop}, device)});
  const int64_t back_words = ticket.any_top ? output_words : 2 * n;
  backend_.copy_async(staging.slice_rows(0, back_words), outputs_.slice_rows(0, back_words));
  ticket.copied = backend_.mark();
  ticket.sampled_ids = outputs_.slice_rows(0, n);  // shares outputs_' storage: outlives a regrowth
  ticket.half = half;
  half_in_use_[half] = true;
}

}  // namespace strata
