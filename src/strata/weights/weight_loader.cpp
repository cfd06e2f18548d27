#include "strata/weights/weight_loader.h"

#include "strata/core/error.h"

namespace strata {

const WeightInfo& WeightLoader::require(std::string_view name, Shape expected) const {
  const WeightInfo* info = optional(name, expected);
  if (info == nullptr)
    fail("missing tensor '{}' in {}: the checkpoint does not match its config.json",
         full_name(name), source_->description());
  return *info;
}

const WeightInfo* WeightLoader::optional(std::string_view name, Shape expected) const {
  const WeightInfo* info = source_->find(full_name(name));
  if (info != nullptr && !(info->shape == expected))
    fail("tensor '{}' in {} has shape {}, but config.json implies {}: the checkpoint does not "
         "match its config.json",
         info->name, info->file, info->shape.str(), expected.str());
  return info;
}

WeightLoader WeightLoader::scope(std::string_view prefix) const {
  return WeightLoader(*source_, full_name(prefix) + ".");
}

std::string WeightLoader::full_name(std::string_view name) const {
  return prefix_ + std::string(name);
}

}  // namespace strata
