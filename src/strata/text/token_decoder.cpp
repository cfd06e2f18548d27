// Step semantics copied from Hugging Face tokenizers' decoders (decode_chain of each).
#include "strata/text/token_decoder.h"

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/text/byte_level.h"
#include "strata/text/utf8.h"

namespace strata::text {
namespace {

using Kind = DecoderStep::Kind;

std::string replace_literal(const std::string& s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  size_t prev = 0;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, prev)) {
    out.append(s, prev, at - prev);
    out += to;
    prev = at + from.size();
  }
  out.append(s, prev);
  return out;
}

// ByteLevel: every token back to bytes (tokens outside the alphabet keep their UTF-8),
// then one lossy UTF-8 decode over the whole byte string.
std::vector<std::string> byte_level(const std::vector<std::string>& tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    const auto raw = byte_level_to_bytes(t);
    bytes += raw ? *raw : t;
  }
  return {utf8_lossy(bytes)};
}

std::optional<uint8_t> byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return std::nullopt;
  const auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  if (!hex(t[3]) || !hex(t[4])) return std::nullopt;
  return static_cast<uint8_t>(std::stoi(t.substr(3, 2), nullptr, 16));
}

// ByteFallback: runs of <0xXX> become their bytes if those form valid UTF-8, otherwise one
// U+FFFD per byte.
std::vector<std::string> byte_fallback(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string pending;
  size_t num_pending = 0;
  const auto flush = [&] {
    if (num_pending == 0) return;
    if (is_valid_utf8(pending)) {
      out.push_back(pending);
    } else {
      for (size_t i = 0; i < num_pending; ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    pending.clear();
    num_pending = 0;
  };
  for (const std::string& t : tokens) {
    if (const auto b = byte_token(t)) {
      pending.push_back(static_cast<char>(*b));
      ++num_pending;
    } else {
      flush();
      out.push_back(t);
    }
  }
  flush();
  return out;
}

std::string metaspace_token(const DecoderStep& step, const std::string& t, bool first) {
  std::string out = replace_literal(t, step.pattern, first && step.prepend ? "" : " ");
  return out;
}

// Strip removes up to n copies of the character at each end of each token.
std::string strip_token(const DecoderStep& step, const std::string& t) {
  const std::string& c = step.pattern;
  size_t b = 0, e = t.size();
  for (int i = 0; i < step.strip_start && e - b >= c.size() && t.compare(b, c.size(), c) == 0; ++i) b += c.size();
  for (int i = 0; i < step.strip_stop && e - b >= c.size() && t.compare(e - c.size(), c.size(), c) == 0; ++i) e -= c.size();
  return t.substr(b, e - b);
}

// tokenizers' WordPiece cleanup: spaces the decoder put before punctuation and contractions go.
std::string wordpiece_cleanup(std::string t) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) t = replace_literal(t, from, to);
  return t;
}

// A token after the first joins its word without its prefix ("##ing"), or starts a new word.
std::vector<std::string> wordpiece(const DecoderStep& step, std::vector<std::string> tokens) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string& t = tokens[i];
    if (i > 0) t = t.starts_with(step.pattern) ? t.substr(step.pattern.size()) : " " + t;
    if (step.cleanup) t = wordpiece_cleanup(std::move(t));
  }
  return tokens;
}

std::vector<std::string> apply_step(const DecoderStep& step, std::vector<std::string> tokens) {
  switch (step.kind) {
    case Kind::kByteLevel: return byte_level(tokens);
    case Kind::kByteFallback: return byte_fallback(tokens);
    case Kind::kFuse: {
      std::string all;
      for (const auto& t : tokens) all += t;
      return {all};
    }
    case Kind::kMetaspace:
      for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = metaspace_token(step, tokens[i], i == 0);
      return tokens;
    case Kind::kStrip:
      for (auto& t : tokens) t = strip_token(step, t);
      return tokens;
    case Kind::kReplace:
      for (auto& t : tokens) t = step.regex ? step.regex->replace_all(t, step.content) : replace_literal(t, step.pattern, step.content);
      return tokens;
    case Kind::kWordPiece: return wordpiece(step, std::move(tokens));
  }
  return tokens;
}

DecoderStep metaspace_from_json(const nlohmann::json& config) {
  DecoderStep step{.kind = Kind::kMetaspace, .pattern = config.value("replacement", std::string("\u2581"))};
  if (config.contains("prepend_scheme")) step.prepend = config["prepend_scheme"].get<std::string>() != "never";
  else step.prepend = config.value("add_prefix_space", true);
  return step;
}

void add_from_json(TokenDecoder& decoder, const nlohmann::json& config) {
  const std::string type = config.at("type").get<std::string>();
  if (type == "Sequence") {
    for (const auto& child : config.at("decoders")) add_from_json(decoder, child);
  } else if (type == "ByteLevel") {
    decoder.add({.kind = Kind::kByteLevel});
  } else if (type == "ByteFallback") {
    decoder.add({.kind = Kind::kByteFallback});
  } else if (type == "Fuse") {
    decoder.add({.kind = Kind::kFuse});
  } else if (type == "Metaspace") {
    decoder.add(metaspace_from_json(config));
  } else if (type == "Strip") {
    decoder.add({.kind = Kind::kStrip, .pattern = config.at("content").get<std::string>(),
                 .strip_start = config.value("start", 0), .strip_stop = config.value("stop", 0)});
  } else if (type == "Replace") {
    DecoderStep step{.kind = Kind::kReplace, .content = config.at("content").get<std::string>()};
    const auto& pattern = config.at("pattern");
    if (pattern.contains("Regex")) step.regex = std::make_shared<Regex>(pattern["Regex"].get<std::string>());
    else step.pattern = pattern.at("String").get<std::string>();
    decoder.add(std::move(step));
  } else if (type == "WordPiece") {
    decoder.add({.kind = Kind::kWordPiece, .pattern = config.value("prefix", std::string("##")),
                 .cleanup = config.value("cleanup", true)});
  } else {
    fail("tokenizer.json decoder type '{}' is not supported (supported: ByteLevel, Metaspace, ByteFallback, "
         "Fuse, Strip, Replace, WordPiece, Sequence)", type);
  }
}

}  // namespace

TokenDecoder TokenDecoder::from_json(const nlohmann::json& config) {
  TokenDecoder decoder;
  if (config.is_null()) decoder.join_with_spaces_ = true;
  else add_from_json(decoder, config);
  return decoder;
}

std::string TokenDecoder::decode(std::vector<std::string> tokens) const {
  std::string out;
  if (join_with_spaces_) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const DecoderStep& step : steps_) tokens = apply_step(step, std::move(tokens));
  for (const auto& t : tokens) out += t;
  return out;
}

}  // namespace strata::text
