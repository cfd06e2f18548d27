#include "strata/model/arch/qwen4_exp_config.h"

#include <algorithm>

#include "strata/core/error.h"

namespace strata {
namespace {

constexpr uint64_t kSplitmixGamma = 0x9E3779B97F4A7C15ull;
constexpr int64_t kLayerSeedPrime = 10007;

uint64_t splitmix64(uint64_t value) {
  value += kSplitmixGamma;
  value = (value ^ (value >> 30)) * 0xBF58476D1CE4E5B9ull;
  value = (value ^ (value >> 27)) * 0x94D049BB133111EBull;
  return value ^ (value >> 31);
}

// transformers' _build_layer_multipliers: odd values below 2^63 / vocab_size.
std::vector<int64_t> layer_multipliers(int64_t vocab_size, int64_t ngram_size, int64_t ple_index, int64_t seed) {
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) / static_cast<uint64_t>(std::max<int64_t>(vocab_size, 1));
  const uint64_t half_bound = std::max<uint64_t>(1, limit / 2);
  const uint64_t base_seed = static_cast<uint64_t>(seed + kLayerSeedPrime * ple_index);
  std::vector<int64_t> multipliers;
  for (int64_t i = 0; i < ngram_size; ++i)
    multipliers.push_back(static_cast<int64_t>(2 * (splitmix64(base_seed + kSplitmixGamma * (i + 1)) % half_bound) + 1));
  return multipliers;
}

bool is_prime(int64_t value) {
  if (value < 2) return false;
  if (value % 2 == 0) return value == 2;
  for (int64_t d = 3; d * d <= value; d += 2)
    if (value % d == 0) return false;
  return true;
}

// The first `count` primes above `after`, ascending.
std::vector<int64_t> primes_after(int64_t after, int64_t count) {
  std::vector<int64_t> primes;
  for (int64_t p = after + 1; static_cast<int64_t>(primes.size()) < count; ++p)
    if (is_prime(p)) primes.push_back(p);
  return primes;
}

int64_t positive(const ModelConfig& config, const std::string& key, int64_t fallback) {
  const int64_t value = config.get_int(key, fallback);
  if (value < 1) fail("config.json: {} is {}; it must be positive", key, value);
  return value;
}

std::vector<bool> read_layer_types(const ModelConfig& config) {
  const std::vector<std::string> types = config.get_string_list("layer_types");
  if (static_cast<int64_t>(types.size()) != config.num_hidden_layers)
    fail("config.json: layer_types has {} entries for {} layers", types.size(), config.num_hidden_layers);
  std::vector<bool> full;
  for (const std::string& type : types) {
    if (type != "linear_attention" && type != "indexed_attention" && type != "full_attention")
      fail("config.json: layer_types entry '{}'; Qwen4-Exp has linear_attention and indexed_attention layers", type);
    full.push_back(type != "linear_attention");
  }
  return full;
}

Qwen4ExpQsaConfig read_qsa(const ModelConfig& config) {
  if (!config.has("indexer_n_heads"))
    fail("config.json: Qwen4-Exp without QSA (no indexer_n_heads): transformers' Qwen4ExpTextAttention always "
         "builds the indexer, so the checkpoint cannot be run without it");
  Qwen4ExpQsaConfig qsa{.index_heads = positive(config, "indexer_n_heads", 0),
                        .index_head_dim = positive(config, "indexer_head_dim", 0),
                        .budget = positive(config, "indexer_budget", 0),
                        .compress_ratio = positive(config, "indexer_compress_ratio", 0)};
  if (config.get_int("indexer_kv_heads", 1) != 1) fail("config.json: indexer_kv_heads must be 1 for Qwen4-Exp QSA");
  if (qsa.budget % qsa.compress_ratio != 0)
    fail("config.json: indexer_budget {} must be a multiple of indexer_compress_ratio {}", qsa.budget, qsa.compress_ratio);
  if (qsa.index_head_dim > config.head_dim)
    fail("config.json: indexer_head_dim {} exceeds head_dim {}; a token's index key is kept in a cache head of "
         "head_dim values", qsa.index_head_dim, config.head_dim);
  return qsa;
}

std::vector<Qwen4ExpPleConfig> read_ple(const ModelConfig& config, const std::vector<int64_t>& layer_ids) {
  if (layer_ids.empty()) return {};
  const int64_t ngram_size = positive(config, "ngram_size", 3), heads_per_ngram = positive(config, "heads_per_ngram", 8);
  const int64_t heads = (ngram_size - 1) * heads_per_ngram, embed_dim = config.get_int("ple_embed_dim", config.hidden_size);
  if (ngram_size < 2 || embed_dim % heads != 0)
    fail("config.json: ple_embed_dim {} must split evenly over (ngram_size - 1) * heads_per_ngram = {} heads", embed_dim,
         heads);
  if (config.eos_token_ids.empty()) fail("config.json: eos_token_id must be set when ple_layer_ids are");
  if (config.vocab_size >= (int64_t{1} << 22) - 1)
    fail("config.json: vocab_size {} too large for the PLE n-gram carry (at most 4194302 ids)", config.vocab_size);
  const int64_t num_layers = static_cast<int64_t>(layer_ids.size());
  const std::vector<int64_t> sizes = primes_after(positive(config, "ngram_vocab_size_base", 20000000) - 1, num_layers * heads);
  const int64_t divisor = positive(config, "make_ngram_vocab_size_divisible_by", 128);
  std::vector<Qwen4ExpPleConfig> layers;
  for (int64_t l = 0; l < num_layers; ++l) {
    Qwen4ExpPleConfig ple{.embed_dim = embed_dim, .conv_kernel = positive(config, "ple_conv_kernel_size", 4),
                          .split_parts = positive(config, "split_ngram_parts", 512)};
    ple.hash = {.ngram_size = ngram_size, .heads_per_ngram = heads_per_ngram,
                .eos_token_id = static_cast<int32_t>(config.eos_token_ids.front()),
                .multipliers = layer_multipliers(config.vocab_size, ngram_size, l, config.get_int("seed", 1234))};
    int64_t total = 0;
    for (int64_t j = 0; j < heads; ++j) {
      ple.hash.vocab_sizes.push_back(sizes[l * heads + j]);
      ple.hash.offsets.push_back(total);
      total += sizes[l * heads + j];
    }
    ple.table_rows = (total + divisor - 1) / divisor * divisor;
    layers.push_back(std::move(ple));
  }
  return layers;
}

}  // namespace

Qwen4ExpConfig Qwen4ExpConfig::read(const ModelConfig& config) {
  Qwen4ExpConfig q{.full_attention = read_layer_types(config), .hc_count = config.get_int("hc_count", 4),
                   .hc_lowrank = positive(config, "hc_lowrank", 320), .qsa = read_qsa(config)};
  if (q.hc_count < 2) fail("config.json: hc_count is {}; Qwen4-Exp needs more than one stream", q.hc_count);
  const std::string gate = config.get_string("output_gate_type", config.hidden_act);
  if (gate != "silu" && gate != "sigmoid")
    fail("config.json: output_gate_type '{}': Qwen4-Exp's DeltaNet gate is silu or sigmoid", gate);
  q.output_gate = gate == "sigmoid" ? ops::GateActivation::kSigmoid : ops::GateActivation::kSilu;
  std::vector<int64_t> ids = config.get_int_list("ple_layer_ids");
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  q.ple_index.assign(config.num_hidden_layers, -1);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 1 || ids[i] > config.num_hidden_layers || q.full_attention[ids[i] - 1])
      fail("config.json: ple_layer_ids entry {} must name a linear_attention layer, one-indexed in [1, {}]", ids[i],
           config.num_hidden_layers);
    q.ple_index[ids[i] - 1] = static_cast<int64_t>(i);
  }
  q.ple_layers = read_ple(config, ids);
  return q;
}

}  // namespace strata
