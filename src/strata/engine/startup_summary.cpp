#include "strata/engine/startup_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "strata/cache/block_pool.h"
#include "strata/cache/ssm_state_pool.h"
#include "strata/core/progress.h"

namespace strata {

namespace {

std::string weights_line(const ModelWeights& weights) {
  std::vector<std::string_view> dtypes;
  for (DType dtype : weights.dtypes()) dtypes.push_back(dtype_name(dtype));
  const int ranks = weights.shard().size;
  return fmt::format("weights{}: {} parameters, {} in memory, stored as {} ({})",
                     ranks > 1 ? fmt::format(" (rank 0 of {})", ranks) : "", weights.num_parameters(),
                     format_bytes(weights.num_bytes()), fmt::join(dtypes, ", "), weights.description());
}

// What splitting the vocabulary saves each rank: its rows of the embedding and LM head against
// the whole tables (one table when tied).
std::string vocab_line(const Model::Parts& parts) {
  const VocabShard& vocab = parts.vocab;
  const bool tied = parts.lm_head.data() == parts.embed_tokens.data();
  const int64_t held = parts.embed_tokens.nbytes() + (tied ? 0 : parts.lm_head.nbytes());
  return fmt::format("vocabulary: {} tokens padded to {}, {} rows a rank of the {}: {} instead of {}",
                     vocab.vocab_size, vocab.padded_vocab_size, vocab.num_rows(),
                     tied ? "tied embedding and LM head" : "embedding and of the LM head", format_bytes(held),
                     format_bytes(held / vocab.num_rows() * vocab.vocab_size));
}

// How many sequences of `num_tokens` tokens the pool holds at once, none sharing a block.
int64_t sequences_that_fit(int64_t num_blocks, int64_t block_size, int64_t num_tokens) {
  const int64_t blocks_per_sequence = (num_tokens + block_size - 1) / block_size;
  return blocks_per_sequence > 0 ? num_blocks / blocks_per_sequence : 0;
}

std::string kv_line(ModelRunner& runner, const StartupFacts& facts) {
  const int64_t num_blocks = runner.block_pool().num_blocks(), block_size = runner.block_size();
  const std::string dtype = runner.kv_cache() ? std::string(dtype_name(runner.kv_cache()->shape().dtype)) : "none";
  std::string line = fmt::format("KV cache ({}): {} blocks of {} tokens ({} tokens); {} sequences fit at the model's "
                                 "full context ({} tokens)",
                                 dtype, num_blocks, block_size, num_blocks * block_size,
                                 sequences_that_fit(num_blocks, block_size, facts.model_context_tokens),
                                 facts.model_context_tokens);
  if (facts.max_model_len != facts.model_context_tokens)
    line += fmt::format(", {} at max_model_len {}",
                        sequences_that_fit(num_blocks, block_size, facts.max_model_len), facts.max_model_len);
  return line;
}

std::string swap_line(ModelRunner& runner) {
  const SwapSpace* swap = runner.memory().swap_space();
  if (swap == nullptr) return "swap space: none (preempted sequences recompute; --swap-space GiB to keep them)";
  const char* memory = runner.backend().device().is_cpu() ? "host memory" : "pinned host memory";
  std::string line = fmt::format("swap space: {} of {} for preempted sequences, {} KV blocks", format_bytes(swap->bytes()),
                                 memory, swap->num_host_blocks());
  if (runner.ssm_pool() != nullptr) line += fmt::format(" and {} SSM slots", swap->num_host_slots());
  return line;
}

}  // namespace

std::vector<std::string> startup_summary(const StartupFacts& facts) {
  ModelRunner& runner = *facts.runner;
  std::vector<std::string> lines = {weights_line(*facts.weights)};
  if (runner.model().parts().vocab.split()) lines.push_back(vocab_line(runner.model().parts()));
  lines.push_back(kv_line(runner, facts));
  if (const SsmStatePool* ssm = runner.ssm_pool())
    lines.push_back(fmt::format("SSM state: {} slots of {}", ssm->capacity(), format_bytes(ssm->slot_bytes())));
  lines.push_back(swap_line(runner));
  const PrefixCache* cache = runner.memory().prefix_cache();
  if (const SnapshotHostTier* host = cache != nullptr ? cache->host_tier() : nullptr)
    lines.push_back(fmt::format("SSM snapshot host tier: {} snapshots in {} of host memory", host->capacity(),
                                format_bytes(host->capacity() * runner.ssm_pool()->slot_bytes())));
  if (facts.draft_runner != nullptr && facts.draft_runner->model().parts().mtp_input.defined()) {
    const ModelWeights* whole = facts.draft_weights;  // its own only when the target is split
    lines.push_back(fmt::format("MTP module: {} layers{}; its KV cache {} blocks", facts.draft_runner->model().num_layers(),
                                whole ? fmt::format(", whole on rank 0 ({} parameters, {} in memory)",
                                                    whole->num_parameters(), format_bytes(whole->num_bytes()))
                                      : "",
                                facts.draft_runner->block_pool().num_blocks()));
  } else if (facts.draft_runner != nullptr && facts.draft_runner->model().parts().eagle3.defined()) {
    const Model& head = facts.draft_runner->model();
    lines.push_back(fmt::format("EAGLE-3 head: {} parameters, {} in memory, reading target layers {}, {} draft "
                                "tokens; its KV cache {} blocks", facts.draft_weights->num_parameters(),
                                format_bytes(facts.draft_weights->num_bytes()),
                                fmt::join(head.parts().eagle3.target_layers, ", "), head.config().vocab_size,
                                facts.draft_runner->block_pool().num_blocks()));
  } else if (facts.draft_runner != nullptr) {
    ModelRunner& draft = *facts.draft_runner;
    lines.push_back(fmt::format("draft model: {} parameters, {} in memory; its KV cache {} blocks{}",
                                facts.draft_weights->num_parameters(), format_bytes(facts.draft_weights->num_bytes()),
                                draft.block_pool().num_blocks(),
                                draft.ssm_pool() ? fmt::format(", {} SSM slots", draft.ssm_pool()->capacity()) : ""));
  }
  if (!runner.backend().device().is_cpu()) {
    const std::vector<int64_t> sizes = runner.captured_batch_sizes();
    lines.push_back(sizes.empty() ? std::string("CUDA graphs: none (decode runs eagerly)")
                                  : fmt::format("CUDA graphs: batch sizes {}", fmt::join(sizes, ", ")));
  }
  return lines;
}

}  // namespace strata
