// A Sequence of processors composes: each wraps the result of the previous one.
#include "strata/text/post_processor.h"

#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata::text {
namespace {

void add_template(std::vector<int32_t>& prefix, std::vector<int32_t>& suffix,
                  const nlohmann::json& config) {
  bool seen_sequence = false;
  for (const auto& item : config.at("single")) {
    if (item.contains("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    const auto& special = config.at("special_tokens");
    if (!special.contains(name)) fail("tokenizer.json TemplateProcessing names '{}' but special_tokens lacks it", name);
    const auto ids = special[name].at("ids").get<std::vector<int32_t>>();
    auto& target = seen_sequence ? suffix : prefix;
    target.insert(target.end(), ids.begin(), ids.end());
  }
}

// The pair template: ids (and their segments) before the first sequence, between the two, after
// the second; and the segments of the two sequences.
struct PairParts {
  std::vector<int32_t> ids[3], types[3];
  int32_t sequence_types[2] = {0, 1};

  void add(int part, const std::vector<int32_t>& new_ids, int32_t type) {
    ids[part].insert(ids[part].end(), new_ids.begin(), new_ids.end());
    types[part].insert(types[part].end(), new_ids.size(), type);
  }
};

void add_pair_template(PairParts& pair, const nlohmann::json& config) {
  if (!config.contains("pair")) return;
  int part = 0;
  for (const auto& item : config.at("pair")) {
    if (item.contains("Sequence")) {
      const int sequence = item.at("Sequence").value("id", "A") == "A" ? 0 : 1;
      pair.sequence_types[sequence] = item.at("Sequence").value("type_id", sequence);
      part = sequence + 1;
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    const auto& special = config.at("special_tokens");
    if (!special.contains(name)) fail("tokenizer.json TemplateProcessing names '{}' but special_tokens lacks it", name);
    pair.add(part, special[name].at("ids").get<std::vector<int32_t>>(), item.at("SpecialToken").value("type_id", 0));
  }
}

void add_from_json(std::vector<int32_t>& prefix, std::vector<int32_t>& suffix, PairParts& pair,
                   const nlohmann::json& config) {
  const std::string type = config.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& child : config.at("processors")) add_from_json(prefix, suffix, pair, child);
  } else if (type == "TemplateProcessing") {
    std::vector<int32_t> p, s;
    add_template(p, s, config);
    prefix.insert(prefix.begin(), p.begin(), p.end());
    suffix.insert(suffix.end(), s.begin(), s.end());
    add_pair_template(pair, config);
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    const int32_t cls = config.at("cls").at(1).get<int32_t>(), sep = config.at("sep").at(1).get<int32_t>();
    prefix.insert(prefix.begin(), cls);
    suffix.push_back(sep);
    const bool roberta = type == "RobertaProcessing";  // <s> A </s></s> B </s>, all in segment 0
    pair.sequence_types[1] = roberta ? 0 : 1;
    pair.add(0, {cls}, 0);
    pair.add(1, roberta ? std::vector<int32_t>{sep, sep} : std::vector<int32_t>{sep}, 0);
    pair.add(2, {sep}, pair.sequence_types[1]);
  } else if (type != "ByteLevel") {
    fail("tokenizer.json post_processor type '{}' is not supported (supported: TemplateProcessing, "
         "BertProcessing, RobertaProcessing, ByteLevel, Sequence)", type);
  }
}

}  // namespace

PostProcessor PostProcessor::from_json(const nlohmann::json& config) {
  PostProcessor pp;
  PairParts pair;
  if (!config.is_null()) add_from_json(pp.prefix_, pp.suffix_, pair, config);
  pp.pair_ = {.prefix = pair.ids[0], .middle = pair.ids[1], .suffix = pair.ids[2], .prefix_types = pair.types[0],
              .middle_types = pair.types[1], .suffix_types = pair.types[2], .a_type = pair.sequence_types[0],
              .b_type = pair.sequence_types[1]};
  return pp;
}

PostProcessor PostProcessor::from_bos_eos(int32_t bos_id, int32_t eos_id) {
  PostProcessor pp;
  if (bos_id >= 0) pp.prefix_.push_back(bos_id);
  if (eos_id >= 0) pp.suffix_.push_back(eos_id);
  return pp;
}

void PostProcessor::apply(std::vector<int32_t>& ids) const {
  ids.insert(ids.begin(), prefix_.begin(), prefix_.end());
  ids.insert(ids.end(), suffix_.begin(), suffix_.end());
}

}  // namespace strata::text

namespace strata::text {

std::vector<int32_t> PostProcessor::apply_pair(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                                               std::vector<int32_t>* type_ids) const {
  std::vector<int32_t> ids = pair_.prefix;
  ids.insert(ids.end(), a.begin(), a.end());
  ids.insert(ids.end(), pair_.middle.begin(), pair_.middle.end());
  ids.insert(ids.end(), b.begin(), b.end());
  ids.insert(ids.end(), pair_.suffix.begin(), pair_.suffix.end());
  if (type_ids == nullptr) return ids;
  *type_ids = pair_.prefix_types;
  type_ids->insert(type_ids->end(), a.size(), pair_.a_type);
  type_ids->insert(type_ids->end(), pair_.middle_types.begin(), pair_.middle_types.end());
  type_ids->insert(type_ids->end(), b.size(), pair_.b_type);
  type_ids->insert(type_ids->end(), pair_.suffix_types.begin(), pair_.suffix_types.end());
  return ids;
}

}  // namespace strata::text
