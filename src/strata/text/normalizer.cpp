// Normalizer steps. Unicode forms and case mapping come from ICU (libicu-dev).
#include "strata/text/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/utf8.h"

namespace strata::text {
namespace {

using Kind = NormalizerStep::Kind;

const icu::Normalizer2* icu_normalizer(Kind kind) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* n = nullptr;
  switch (kind) {
    case Kind::kNfc: n = icu::Normalizer2::getNFCInstance(status); break;
    case Kind::kNfd: n = icu::Normalizer2::getNFDInstance(status); break;
    case Kind::kNfkc: n = icu::Normalizer2::getNFKCInstance(status); break;
    default: n = icu::Normalizer2::getNFKDInstance(status); break;
  }
  if (U_FAILURE(status) || n == nullptr) fail("ICU normalizer data is unavailable: {}", u_errorName(status));
  return n;
}

// Normalizes one well-formed UTF-8 run.
void append_normalized(const icu::Normalizer2& n, std::string_view run, std::string& out) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::StringPiece piece(run.data(), static_cast<int32_t>(run.size()));
  if (n.isNormalizedUTF8(piece, status) && U_SUCCESS(status)) {
    out.append(run);
    return;
  }
  status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(&out);
  n.normalizeUTF8(0, piece, sink, nullptr, status);
  if (U_FAILURE(status)) fail("ICU normalization failed: {}", u_errorName(status));
}

// Calls run_fn on each maximal well-formed run and copies ill-formed bytes as they are.
template <typename RunFn>
std::string map_valid_runs(std::string_view text, RunFn run_fn) {
  std::string out;
  out.reserve(text.size());
  size_t run_begin = 0, pos = 0;
  while (pos < text.size()) {
    const size_t n = utf8_sequence_length(text, pos);
    if (n > 0) {
      pos += n;
      continue;
    }
    run_fn(text.substr(run_begin, pos - run_begin), out);
    const size_t bad = utf8_invalid_length(text, pos);
    out.append(text.substr(pos, bad));
    pos += bad;
    run_begin = pos;
  }
  run_fn(text.substr(run_begin), out);
  return out;
}

std::string replace_literal(std::string_view text, std::string_view pattern, std::string_view with) {
  if (pattern.empty()) return std::string(text);
  std::string out;
  size_t prev = 0;
  for (size_t at = text.find(pattern); at != std::string_view::npos; at = text.find(pattern, prev)) {
    out.append(text.substr(prev, at - prev));
    out.append(with);
    prev = at + pattern.size();
  }
  out.append(text.substr(prev));
  return out;
}

// Rewrites every code point of the well-formed runs through fn(cp, out).
template <typename CodePointFn>
std::string map_code_points(std::string_view text, CodePointFn fn) {
  return map_valid_runs(text, [&](std::string_view run, std::string& out) {
    for (size_t pos = 0; pos < run.size();) {
      char32_t cp = 0;
      pos += utf8_sequence_length(run, pos, &cp);
      fn(cp, out);
    }
  });
}

std::string lowercase(std::string_view text) {
  return map_code_points(text, [](char32_t cp, std::string& out) {
    append_utf8(out, static_cast<char32_t>(u_tolower(static_cast<UChar32>(cp))));
  });
}

// tokenizers' BertNormalizer: \t \n \r count as whitespace, not control; "control" is the
// Other categories (Cc, Cf, Cn, Co, Cs).
bool is_bert_whitespace(char32_t cp) {
  return cp == '\t' || cp == '\n' || cp == '\r' || u_hasBinaryProperty(static_cast<UChar32>(cp), UCHAR_WHITE_SPACE);
}

bool is_bert_control(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  switch (u_charType(static_cast<UChar32>(cp))) {
    case U_CONTROL_CHAR: case U_FORMAT_CHAR: case U_UNASSIGNED: case U_PRIVATE_USE_CHAR: case U_SURROGATE:
      return true;
    default:
      return false;
  }
}

bool is_cjk_ideograph(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

std::string apply_bert_step(Kind kind, std::string_view text) {
  return map_code_points(text, [kind](char32_t cp, std::string& out) {
    if (kind == Kind::kStripAccents) {
      if (u_charType(static_cast<UChar32>(cp)) != U_NON_SPACING_MARK) append_utf8(out, cp);
    } else if (kind == Kind::kBertCleanText) {
      if (cp == 0 || cp == 0xFFFD || is_bert_control(cp)) return;
      append_utf8(out, is_bert_whitespace(cp) ? U' ' : cp);
    } else if (is_cjk_ideograph(cp)) {
      out += ' ';
      append_utf8(out, cp);
      out += ' ';
    } else {
      append_utf8(out, cp);
    }
  });
}

// BertNormalizer as the steps it runs; strip_accents null follows lowercase.
void add_bert_normalizer(Normalizer& normalizer, const nlohmann::json& config) {
  if (config.value("clean_text", true)) normalizer.add({.kind = Kind::kBertCleanText});
  if (config.value("handle_chinese_chars", true)) normalizer.add({.kind = Kind::kBertChineseChars});
  const bool lowercase = config.value("lowercase", true);
  const bool strip_accents = config.contains("strip_accents") && !config["strip_accents"].is_null()
                                 ? config["strip_accents"].get<bool>() : lowercase;
  if (strip_accents) {
    normalizer.add({.kind = Kind::kNfd});
    normalizer.add({.kind = Kind::kStripAccents});
  }
  if (lowercase) normalizer.add({.kind = Kind::kLowercase});
}

bool is_space_byte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string apply_step(const NormalizerStep& step, std::string_view text) {
  switch (step.kind) {
    case Kind::kNfc:
    case Kind::kNfd:
    case Kind::kNfkc:
    case Kind::kNfkd: {
      const icu::Normalizer2& n = *icu_normalizer(step.kind);
      return map_valid_runs(text, [&](std::string_view run, std::string& out) { append_normalized(n, run, out); });
    }
    case Kind::kLowercase: return lowercase(text);
    case Kind::kStripAccents:
    case Kind::kBertCleanText:
    case Kind::kBertChineseChars: return apply_bert_step(step.kind, text);
    case Kind::kReplace:
      return step.regex ? step.regex->replace_all(text, step.content) : replace_literal(text, step.pattern, step.content);
    case Kind::kPrepend: return text.empty() ? std::string() : step.content + std::string(text);
    case Kind::kStrip: {
      size_t b = 0, e = text.size();
      while (step.strip_left && b < e && is_space_byte(text[b])) ++b;
      while (step.strip_right && e > b && is_space_byte(text[e - 1])) --e;
      return std::string(text.substr(b, e - b));
    }
  }
  return std::string(text);
}

void add_from_json(Normalizer& normalizer, const nlohmann::json& config) {
  const std::string type = config.at("type").get<std::string>();
  NormalizerStep step;
  if (type == "Sequence") {
    for (const auto& child : config.at("normalizers")) add_from_json(normalizer, child);
    return;
  }
  if (type == "BertNormalizer") {
    add_bert_normalizer(normalizer, config);
    return;
  }
  if (type == "NFC") step.kind = Kind::kNfc;
  else if (type == "NFD") step.kind = Kind::kNfd;
  else if (type == "NFKC") step.kind = Kind::kNfkc;
  else if (type == "NFKD") step.kind = Kind::kNfkd;
  else if (type == "Lowercase") step.kind = Kind::kLowercase;
  else if (type == "StripAccents") step.kind = Kind::kStripAccents;
  else if (type == "Prepend") {
    step.kind = Kind::kPrepend;
    step.content = config.at("prepend").get<std::string>();
  } else if (type == "Replace") {
    step.kind = Kind::kReplace;
    step.content = config.at("content").get<std::string>();
    const auto& pattern = config.at("pattern");
    if (pattern.contains("Regex")) step.regex = std::make_shared<Regex>(pattern["Regex"].get<std::string>());
    else step.pattern = pattern.at("String").get<std::string>();
  } else if (type == "Strip") {
    step.kind = Kind::kStrip;
    step.strip_left = config.value("strip_left", true);
    step.strip_right = config.value("strip_right", true);
  } else {
    fail("tokenizer.json normalizer type '{}' is not supported (supported: NFC, NFD, NFKC, NFKD, "
         "Lowercase, Replace, Prepend, Strip, StripAccents, BertNormalizer, Sequence)", type);
  }
  normalizer.add(std::move(step));
}

}  // namespace

Normalizer Normalizer::from_json(const nlohmann::json& config) {
  Normalizer normalizer;
  if (!config.is_null()) add_from_json(normalizer, config);
  return normalizer;
}

std::string Normalizer::normalize(std::string_view text) const {
  std::string current(text);
  for (const NormalizerStep& step : steps_) current = apply_step(step, current);
  return current;
}

}  // namespace strata::text
