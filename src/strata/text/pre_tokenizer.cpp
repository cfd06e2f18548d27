// Each step maps every current piece to zero or more pieces, in order, as Hugging Face's
// PreTokenizedString::split does; delimiter behaviours follow its SplitDelimiterBehavior.
#include "strata/text/pre_tokenizer.h"

#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata::text {
namespace {

using Kind = PreTokenizerStep::Kind;
struct Span {
  size_t begin, end;
  bool is_match;
};

void find_literal(std::string_view text, std::string_view literal, std::vector<ByteRange>& out) {
  if (literal.empty()) return;
  for (size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size()))
    out.emplace_back(at, at + literal.size());
}

// Alternating gap / match spans covering the text.
std::vector<Span> match_spans(const PreTokenizerStep& step, std::string_view text) {
  std::vector<ByteRange> matches;
  if (step.regex) step.regex->find_all(text, matches);
  else find_literal(text, step.literal, matches);
  std::vector<Span> spans;
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (b > prev) spans.push_back({prev, b, step.invert});
    spans.push_back({b, e, !step.invert});
    prev = e;
  }
  if (prev < text.size()) spans.push_back({prev, text.size(), step.invert});
  return spans;
}

// Applies the delimiter behaviour; returned spans are the pieces to keep.
std::vector<Span> apply_behavior(std::vector<Span> spans, SplitBehavior behavior) {
  std::vector<Span> out;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::kIsolated: return spans;
    case SplitBehavior::kRemoved:
      for (const Span& s : spans)
        if (!s.is_match) out.push_back(s);
      return out;
    case SplitBehavior::kMergedWithPrevious:
      for (const Span& s : spans) {
        if (s.is_match && !previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous_match = s.is_match;
      }
      return out;
    case SplitBehavior::kMergedWithNext:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->is_match && !previous_match && !out.empty()) out.back().begin = it->begin;
        else out.push_back(*it);
        previous_match = it->is_match;
      }
      return {out.rbegin(), out.rend()};
    case SplitBehavior::kContiguous:
      for (const Span& s : spans) {
        if (s.is_match == previous_match && !out.empty()) out.back().end = s.end;
        else out.push_back(s);
        previous_match = s.is_match;
      }
      return out;
  }
  return spans;
}

void split_piece(const PreTokenizerStep& step, const Piece& piece, std::vector<Piece>& out) {
  const std::string_view text = piece.text;
  for (const Span& s : apply_behavior(match_spans(step, text), step.behavior)) {
    if (s.end > s.begin) out.push_back({std::string(text.substr(s.begin, s.end - s.begin)), piece.at_start && s.begin == 0});
  }
}

void metaspace_piece(const PreTokenizerStep& step, Piece piece, std::vector<Piece>& out) {
  std::string text;
  for (char c : piece.text) {
    if (c == ' ') text += step.literal;
    else text.push_back(c);
  }
  const bool starts = text.compare(0, step.literal.size(), step.literal) == 0;
  if (!starts && (step.prepend_scheme == PrependScheme::kAlways ||
                  (step.prepend_scheme == PrependScheme::kFirst && piece.at_start)))
    text.insert(0, step.literal);
  piece.text = std::move(text);
  if (!step.split) {
    if (!piece.text.empty()) out.push_back(std::move(piece));
    return;
  }
  PreTokenizerStep splitter{.kind = Kind::kSplit, .literal = step.literal, .behavior = SplitBehavior::kMergedWithNext};
  split_piece(splitter, piece, out);
}

void apply_step(const PreTokenizerStep& step, std::vector<Piece>& pieces) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 2);
  for (Piece& piece : pieces) {
    switch (step.kind) {
      case Kind::kSplit: split_piece(step, piece, out); break;
      case Kind::kMetaspace: metaspace_piece(step, std::move(piece), out); break;
      case Kind::kByteLevel:
        if (step.add_prefix_space && piece.text.compare(0, 1, " ") != 0) piece.text.insert(0, " ");
        if (step.regex) split_piece(step, piece, out);
        else if (!piece.text.empty()) out.push_back(std::move(piece));
        break;
    }
  }
  pieces = std::move(out);
}

SplitBehavior parse_behavior(const std::string& name) {
  if (name == "Removed") return SplitBehavior::kRemoved;
  if (name == "Isolated") return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous") return SplitBehavior::kContiguous;
  fail("tokenizer.json Split behavior '{}' is unknown", name);
}

PrependScheme parse_prepend_scheme(const nlohmann::json& config) {
  if (config.contains("prepend_scheme")) {
    const std::string s = config["prepend_scheme"].get<std::string>();
    if (s == "always") return PrependScheme::kAlways;
    if (s == "first") return PrependScheme::kFirst;
    if (s == "never") return PrependScheme::kNever;
    fail("tokenizer.json Metaspace prepend_scheme '{}' is unknown (always, first, never)", s);
  }
  return config.value("add_prefix_space", true) ? PrependScheme::kAlways : PrependScheme::kNever;
}

PreTokenizerStep regex_split(const std::string& pattern, SplitBehavior behavior, bool invert) {
  return {.kind = Kind::kSplit, .regex = std::make_shared<Regex>(pattern), .behavior = behavior, .invert = invert};
}

void add_from_json(PreTokenizer& pre, const nlohmann::json& config);

void add_split(PreTokenizer& pre, const nlohmann::json& config) {
  const auto& pattern = config.at("pattern");
  const SplitBehavior behavior = parse_behavior(config.at("behavior").get<std::string>());
  const bool invert = config.value("invert", false);
  if (pattern.contains("Regex")) {
    pre.add(regex_split(pattern["Regex"].get<std::string>(), behavior, invert));
  } else {
    pre.add({.kind = Kind::kSplit, .literal = pattern.at("String").get<std::string>(), .behavior = behavior, .invert = invert});
  }
}

void add_from_json(PreTokenizer& pre, const nlohmann::json& config) {
  const std::string type = config.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& child : config.at("pretokenizers")) add_from_json(pre, child);
  } else if (type == "Split") {
    add_split(pre, config);
  } else if (type == "ByteLevel") {
    PreTokenizerStep step{.kind = Kind::kByteLevel, .add_prefix_space = config.value("add_prefix_space", false)};
    if (config.value("use_regex", true)) step.regex = std::make_shared<Regex>(kGpt2SplitRegex);
    pre.add(std::move(step));
  } else if (type == "Metaspace") {
    pre.add({.kind = Kind::kMetaspace, .literal = config.value("replacement", std::string("\u2581")),
             .prepend_scheme = parse_prepend_scheme(config), .split = config.value("split", true)});
  } else if (type == "Digits") {
    const bool individual = config.value("individual_digits", false);
    pre.add(regex_split(individual ? R"(\p{N})" : R"(\p{N}+)", SplitBehavior::kIsolated, false));
  } else if (type == "Whitespace") {
    pre.add(regex_split(R"(\w+|[^\w\s]+)", SplitBehavior::kRemoved, true));
  } else if (type == "WhitespaceSplit") {
    pre.add(regex_split(R"(\s+)", SplitBehavior::kRemoved, false));
  } else if (type == "Punctuation") {
    pre.add(regex_split(R"(\p{P})", parse_behavior(config.value("behavior", std::string("Isolated"))), false));
  } else if (type == "BertPreTokenizer") {  // whitespace removed, then each punctuation character alone
    pre.add(regex_split(R"(\s+)", SplitBehavior::kRemoved, false));
    pre.add(regex_split(R"([\p{P}\x{21}-\x{2F}\x{3A}-\x{40}\x{5B}-\x{60}\x{7B}-\x{7E}])", SplitBehavior::kIsolated,
                        false));
  } else {
    fail("tokenizer.json pre_tokenizer type '{}' is not supported (supported: Sequence, Split, ByteLevel, "
         "Metaspace, Digits, Whitespace, WhitespaceSplit, Punctuation, BertPreTokenizer)", type);
  }
}

}  // namespace

PreTokenizer PreTokenizer::from_json(const nlohmann::json& config) {
  PreTokenizer pre;
  if (!config.is_null()) add_from_json(pre, config);
  return pre;
}

PreTokenizer PreTokenizer::from_regexes(const std::vector<std::string>& patterns) {
  PreTokenizer pre;
  for (const std::string& p : patterns) pre.add(regex_split(p, SplitBehavior::kIsolated, false));
  pre.add({.kind = Kind::kByteLevel});
  return pre;
}

bool PreTokenizer::has_byte_level() const {
  for (const auto& s : steps_)
    if (s.kind == Kind::kByteLevel) return true;
  return false;
}

void PreTokenizer::pre_tokenize(std::string_view text, bool at_start, std::vector<Piece>& out) const {
  std::vector<Piece> pieces;
  if (!text.empty()) pieces.push_back({std::string(text), at_start});
  for (const PreTokenizerStep& step : steps_) apply_step(step, pieces);
  for (Piece& p : pieces) out.push_back(std::move(p));
}

}  // namespace strata::text
