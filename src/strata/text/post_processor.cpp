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

// The pair template's ids before the first sequence, between the two, and after the second.
void add_pair_template(std::vector<int32_t> (&parts)[3], const nlohmann::json& config) {
  if (!config.contains("pair")) return;
  int part = 0;
  for (const auto& item : config.at("pair")) {
    if (item.contains("Sequence")) {
      part = item.at("Sequence").value("id", "A") == "A" ? 1 : 2;
      continue;
    }
    const std::string name = item.at("SpecialToken").at("id").get<std::string>();
    const auto& special = config.at("special_tokens");
    if (!special.contains(name)) fail("tokenizer.json TemplateProcessing names '{}' but special_tokens lacks it", name);
    const auto ids = special[name].at("ids").get<std::vector<int32_t>>();
    parts[part].insert(parts[part].end(), ids.begin(), ids.end());
  }
}

void add_from_json(std::vector<int32_t>& prefix, std::vector<int32_t>& suffix, std::vector<int32_t> (&pair)[3],
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
    pair[0].push_back(cls);
    pair[1].push_back(sep);
    if (type == "RobertaProcessing") pair[1].push_back(sep);  // <s> A </s></s> B </s>
    pair[2].push_back(sep);
  } else if (type != "ByteLevel") {
    fail("tokenizer.json post_processor type '{}' is not supported (supported: TemplateProcessing, "
         "BertProcessing, RobertaProcessing, ByteLevel, Sequence)", type);
  }
}

}  // namespace

PostProcessor PostProcessor::from_json(const nlohmann::json& config) {
  PostProcessor pp;
  std::vector<int32_t> pair[3];
  if (!config.is_null()) add_from_json(pp.prefix_, pp.suffix_, pair, config);
  pp.pair_ = {.prefix = pair[0], .middle = pair[1], .suffix = pair[2]};
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

std::vector<int32_t> PostProcessor::apply_pair(const std::vector<int32_t>& a, const std::vector<int32_t>& b) const {
  std::vector<int32_t> ids = pair_.prefix;
  ids.insert(ids.end(), a.begin(), a.end());
  ids.insert(ids.end(), pair_.middle.begin(), pair_.middle.end());
  ids.insert(ids.end(), b.begin(), b.end());
  ids.insert(ids.end(), pair_.suffix.begin(), pair_.suffix.end());
  return ids;
}

}  // namespace strata::text
