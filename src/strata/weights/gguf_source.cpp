#include "strata/weights/gguf_source.h"

#include <cstring>
#include <filesystem>

#include "strata/core/error.h"
#include "strata/core/logging.h"

namespace strata {

namespace {

struct NamePair {
  std::string_view gguf;
  std::string_view hf;
};

// Per-layer tensors: GGUF base name after "blk.N." -> HF name after "model.layers.N.".
constexpr NamePair kLayerNames[] = {
    {"attn_q", "self_attn.q_proj"},       {"attn_k", "self_attn.k_proj"},
    {"attn_v", "self_attn.v_proj"},       {"attn_output", "self_attn.o_proj"},
    {"attn_q_norm", "self_attn.q_norm"},  {"attn_k_norm", "self_attn.k_norm"},
    {"ffn_gate", "mlp.gate_proj"},        {"ffn_up", "mlp.up_proj"},
    {"ffn_down", "mlp.down_proj"},        {"attn_norm", "input_layernorm"},
    {"ffn_norm", "post_attention_layernorm"}, {"ffn_gate_inp", "mlp.gate"},
};

// MoE experts stored stacked [E, rows, cols] (qwen3moe) -> HF's per-expert names.
constexpr NamePair kExpertNames[] = {
    {"ffn_gate_exps", "gate_proj"}, {"ffn_up_exps", "up_proj"}, {"ffn_down_exps", "down_proj"}};

constexpr NamePair kModelNames[] = {
    {"token_embd", "model.embed_tokens"},
    {"output_norm", "model.norm"},
    {"output", "lm_head"},
};

// Splits "base.weight" / "base.bias" into base and suffix (".weight" / ".bias").
bool split_suffix(std::string_view name, std::string_view* base, std::string_view* suffix) {
  for (std::string_view s : {std::string_view(".weight"), std::string_view(".bias")}) {
    if (name.size() > s.size() && name.substr(name.size() - s.size()) == s) {
      *base = name.substr(0, name.size() - s.size());
      *suffix = s;
      return true;
    }
  }
  return false;
}

// For "blk.N.ffn_*_exps.weight": the layer N and the HF projection name.
std::optional<std::pair<std::string, std::string_view>> gguf_expert_name(std::string_view name) {
  for (const NamePair& p : kExpertNames) {
    const std::string suffix = fmt::format(".{}.weight", p.gguf);
    if (name.substr(0, 4) != "blk." || name.size() <= suffix.size() + 4 ||
        name.substr(name.size() - suffix.size()) != suffix)
      continue;
    const std::string_view layer = name.substr(4, name.size() - suffix.size() - 4);
    if (layer.empty() || layer.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    return std::make_pair(std::string(layer), p.hf);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> gguf_to_hf_name(std::string_view gguf_name) {
  std::string_view base, suffix;
  if (!split_suffix(gguf_name, &base, &suffix)) return std::nullopt;
  for (const NamePair& p : kModelNames) {
    if (base == p.gguf) return fmt::format("{}{}", p.hf, suffix);
  }
  if (base.substr(0, 4) != "blk.") return std::nullopt;
  base.remove_prefix(4);
  const size_t dot = base.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 6) return std::nullopt;
  const std::string_view layer = base.substr(0, dot);
  for (char c : layer) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  const std::string_view rest = base.substr(dot + 1);
  for (const NamePair& p : kLayerNames) {
    if (rest == p.gguf) return fmt::format("model.layers.{}.{}{}", layer, p.hf, suffix);
  }
  return std::nullopt;
}

GgufSource::GgufSource(const std::string& path) : GgufSource(std::make_shared<const GgufFile>(path)) {}

GgufSource::GgufSource(std::shared_ptr<const GgufFile> file) : file_(std::move(file)) {
  architecture_ = file_->get_string("general.architecture");
  if (!gguf_architecture_supported(architecture_)) {
    fail("{}: GGUF architecture '{}' is not supported (llama, qwen2, qwen3, qwen3moe)", file_->path(), architecture_);
  }
  for (const GgufTensorInfo& t : file_->tensors()) {
    if (const auto expert = gguf_expert_name(t.name); expert && t.shape.rank == 3) {
      add_experts(t, expert->first, expert->second);
      continue;
    }
    const std::optional<std::string> hf = gguf_to_hf_name(t.name);
    if (!hf) {
      unmapped_.push_back(t.name);
      spdlog::debug("{}: tensor '{}' has no Hugging Face name; not exposed", file_->path(), t.name);
      continue;
    }
    add_tensor(t, *hf);
  }
}

void GgufSource::add_tensor(const GgufTensorInfo& t, const std::string& hf_name) {
  WeightInfo info{.name = hf_name, .dtype = t.dtype, .shape = t.shape, .data = t.data, .file = file_->path()};
  // llama's converter permutes q and k (weights and biases) for ggml's RoPE; qwen2/3 use
  // the NeoX layout and are stored as in HF.
  if (architecture_ == "llama") {
    const std::string_view name = t.name;
    if (name.find(".attn_q.") != std::string_view::npos) {
      info.data = unpermute_rows(t, file_->get_int("llama.attention.head_count"));
    } else if (name.find(".attn_k.") != std::string_view::npos) {
      const int64_t heads = file_->get_int("llama.attention.head_count");
      info.data = unpermute_rows(t, file_->get_int("llama.attention.head_count_kv", heads));
    }
  }
  weights_.emplace(hf_name, std::move(info));
}

// Expert e of a stacked [E, rows, cols] tensor is its e-th slab of rows, exposed under HF's name.
void GgufSource::add_experts(const GgufTensorInfo& t, const std::string& layer, std::string_view projection) {
  const int64_t experts = t.shape[0], slab_bytes = t.nbytes / experts;
  for (int64_t e = 0; e < experts; ++e) {
    const std::string name = fmt::format("model.layers.{}.mlp.experts.{}.{}.weight", layer, e, projection);
    weights_.emplace(name, WeightInfo{.name = name, .dtype = t.dtype, .shape = Shape{t.shape[1], t.shape[2]},
                                      .data = static_cast<const uint8_t*>(t.data) + e * slab_bytes,
                                      .file = file_->path()});
  }
}

// GGUF row h*head_dim + 2*i + half holds HF row h*head_dim + half*head_dim/2 + i.
const void* GgufSource::unpermute_rows(const GgufTensorInfo& t, int64_t num_heads) {
  const int64_t num_rows = t.shape[0];
  if (num_heads <= 0 || num_rows % num_heads != 0 || (num_rows / num_heads) % 2 != 0) {
    fail("{}: tensor '{}' has {} rows, which do not split into {} heads of even size", file_->path(),
         t.name, num_rows, num_heads);
  }
  const int64_t head_dim = num_rows / num_heads;
  const int64_t row_bytes = t.nbytes / num_rows;
  auto out = std::make_unique<uint8_t[]>(static_cast<size_t>(t.nbytes));
  const auto* src = static_cast<const uint8_t*>(t.data);
  for (int64_t h = 0; h < num_heads; ++h) {
    for (int64_t half = 0; half < 2; ++half) {
      for (int64_t i = 0; i < head_dim / 2; ++i) {
        const int64_t hf_row = h * head_dim + half * head_dim / 2 + i;
        const int64_t gguf_row = h * head_dim + 2 * i + half;
        std::memcpy(out.get() + hf_row * row_bytes, src + gguf_row * row_bytes, static_cast<size_t>(row_bytes));
      }
    }
  }
  owned_.push_back(std::move(out));
  return owned_.back().get();
}

const WeightInfo* GgufSource::find(std::string_view name) const {
  const auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}

std::vector<std::string> GgufSource::names() const {
  std::vector<std::string> out;
  out.reserve(weights_.size());
  for (const auto& [name, info] : weights_) out.push_back(name);
  return out;
}

std::string GgufSource::description() const {
  return fmt::format("{} (GGUF v{}, {}, {} tensors)", std::filesystem::path(file_->path()).filename().string(),
                     file_->version(), architecture_, weights_.size());
}

}  // namespace strata
