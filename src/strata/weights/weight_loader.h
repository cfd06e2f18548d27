// WeightLoader: how architecture code asks a WeightSource for its tensors: by name under a
// prefix, with the shape config.json implies, so a checkpoint that does not match the
// config fails at load time with the tensor's name instead of computing garbage.
#pragma once

#include <string>
#include <string_view>

#include "strata/weights/weight_source.h"

namespace strata {

class WeightLoader {
 public:
  explicit WeightLoader(const WeightSource& source, std::string prefix = "")
      : source_(&source), prefix_(std::move(prefix)) {}

  // Throws Error when the tensor is missing or its shape is not `expected`.
  const WeightInfo& require(std::string_view name, Shape expected) const;
  // nullptr when missing; throws Error when present with another shape.
  const WeightInfo* optional(std::string_view name, Shape expected) const;
  // A loader whose names start with `prefix` + "." (after this loader's own prefix).
  WeightLoader scope(std::string_view prefix) const;

  // `name` with this loader's prefix, as the source knows it.
  std::string full_name(std::string_view name) const;
  const WeightSource& source() const { return *source_; }

 private:
  const WeightSource* source_;
  std::string prefix_;  // "" or ending in ".", e.g. "model.layers.0."
};

}  // namespace strata
