#include "strata/weights/prefixed_source.h"

namespace strata {

bool lacks_model_prefix(const WeightSource& source) {
  if (source.find("model.embed_tokens.weight") != nullptr || source.find("embed_tokens.weight") == nullptr)
    return false;
  for (const std::string& name : source.names())
    if (name.starts_with("model.")) return false;
  return true;
}

PrefixedWeightSource::PrefixedWeightSource(std::unique_ptr<WeightSource> inner, std::string prefix)
    : inner_(std::move(inner)), prefix_(std::move(prefix)) {}

const WeightInfo* PrefixedWeightSource::find(std::string_view name) const {
  if (name.starts_with(prefix_))
    if (const WeightInfo* info = inner_->find(name.substr(prefix_.size()))) return info;
  return inner_->find(name);
}

std::vector<std::string> PrefixedWeightSource::names() const {
  std::vector<std::string> names = inner_->names();
  for (std::string& name : names)
    if (name != "score.weight" && name != "lm_head.weight") name = prefix_ + name;
  return names;
}

}  // namespace strata
