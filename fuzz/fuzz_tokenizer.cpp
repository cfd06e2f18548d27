// Tokenizer fuzz target. Input: one control byte (which tokenizer, add/skip special tokens),
// then bytes that are encoded as text and, read 3 bytes at a time, decoded as token ids
// (some outside the vocabulary on purpose). Checks what tokenizer.h and
// incremental_detokenizer.h promise: ids in range, valid UTF-8 out, byte-level round trip,
// streamed deltas equal to the full decode.
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "strata/core/error.h"
#include "strata/text/byte_level.h"
#include "strata/text/incremental_detokenizer.h"
#include "strata/text/tokenizer.h"
#include "strata/text/utf8.h"
#include "strata/text/vocab_spec.h"

namespace {

using strata::text::Tokenizer;
using strata::text::TokenType;
using strata::text::VocabSpec;

struct Fuzzed {
  std::unique_ptr<Tokenizer> tokenizer;
  bool exact_round_trip = false;  // byte-level, no normalizer: decode(encode(s)) == lossy(s)
};

void add_token(VocabSpec& spec, std::string spelling, TokenType type, float score = 0.f) {
  spec.tokens.push_back(std::move(spelling));
  spec.token_types.push_back(static_cast<int32_t>(type));
  spec.scores.push_back(score);
}

// GPT-2-style byte-level BPE: the 256 byte tokens, a few merges, control and user tokens.
Fuzzed small_byte_level() {
  VocabSpec spec{.model = "gpt2", .pre = "qwen2"};
  for (int b = 0; b < 256; ++b) add_token(spec, strata::text::bytes_to_byte_level(std::string(1, char(b))), TokenType::kNormal);
  for (const char* merge : {"Ġ t", "h e", "Ġt he", "i n", "Ġ Ġ", "ĠĠ ĠĠ", "l l", "he ll", "hell o", "Ã ©"}) {
    spec.merges.push_back(merge);
    std::string merged(merge);
    merged.erase(merged.find(' '), 1);
    add_token(spec, merged, TokenType::kNormal);
  }
  add_token(spec, "<|endoftext|>", TokenType::kControl);
  add_token(spec, "<|im_start|>", TokenType::kControl);
  add_token(spec, "<|im_end|>", TokenType::kControl);
  add_token(spec, "<tool_call>", TokenType::kUserDefined);
  spec.eos_id = 256 + 10;
  return {Tokenizer::from_vocab(spec), true};
}

// SentencePiece-style BPE with byte fallback, merges derived from scores, bos added.
Fuzzed small_sentencepiece() {
  VocabSpec spec{.model = "llama"};
  add_token(spec, "<unk>", TokenType::kUnknown);
  add_token(spec, "<s>", TokenType::kControl);
  add_token(spec, "</s>", TokenType::kControl);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    add_token(spec, hex, TokenType::kByte);
  }
  float score = 0.f;
  for (const char* t : {"\u2581", "a", "e", "h", "l", "o", "t", "\u2581t", "he", "\u2581the", "ll",
                        "\u2581h", "\u2581he", "llo", "\u2581hello", "\u00e9", "\u65e5", "\u672c", "\u65e5\u672c"}) {
    add_token(spec, t, TokenType::kNormal, score);
    score -= 1.f;
  }
  spec.bos_id = 1;
  spec.eos_id = 2;
  spec.unk_id = 0;
  spec.add_bos = true;
  return {Tokenizer::from_vocab(spec), false};
}

std::vector<Fuzzed> build_tokenizers() {
  std::vector<Fuzzed> out;
  out.push_back(small_byte_level());
  out.push_back(small_sentencepiece());
  std::stringstream dirs(FUZZ_TOKENIZER_DIRS);  // real tokenizers unpacked at configure time
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty()) out.push_back({Tokenizer::from_file(dir), false});
  }
  return out;
}

const std::vector<Fuzzed>& tokenizers() {
  static const std::vector<Fuzzed> all = build_tokenizers();
  return all;
}

void check_ids_in_range(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  for (int32_t id : ids) FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), "encode gave an id outside the vocabulary");
}

std::string escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
    out += buf;
  }
  return out;
}

// Streams `ids` through an IncrementalDetokenizer and compares with the one-shot decode.
void check_streaming(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skip_special) {
  const std::string full = tok.decode(ids, skip_special);
  FUZZ_CHECK(strata::text::is_valid_utf8(full), "decode gave ill-formed UTF-8");
  strata::text::IncrementalDetokenizer stream(tok, skip_special);
  std::string streamed;
  for (int32_t id : ids) {
    const std::string delta = stream.push(id);
    FUZZ_CHECK(strata::text::is_valid_utf8(delta), "a streamed delta is ill-formed UTF-8");
    streamed += delta;
  }
  streamed += stream.finish();
  if (streamed != full) {
    std::fprintf(stderr, "ids:");
    for (int32_t id : ids) std::fprintf(stderr, " %d", id);
    std::fprintf(stderr, "\nfull:     %s\nstreamed: %s\n", escaped(full).c_str(), escaped(streamed).c_str());
  }
  FUZZ_CHECK(streamed == full, "streamed deltas differ from the full decode");
}

std::vector<int32_t> ids_from_bytes(const uint8_t* data, size_t size, int32_t vocab_size) {
  std::vector<int32_t> ids;
  const uint32_t span = static_cast<uint32_t>(vocab_size) + 16;
  for (size_t i = 0; i + 3 <= size; i += 3) {
    const uint32_t v = data[i] | (uint32_t{data[i + 1]} << 8) | (uint32_t{data[i + 2]} << 16);
    ids.push_back(static_cast<int32_t>(v % span) - 8);  // -8..-1 and vocab..vocab+7: out of range
  }
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tokenizers();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::vector<Fuzzed>& all = tokenizers();
  const Fuzzed& fuzzed = all[data[0] % all.size()];
  const Tokenizer& tok = *fuzzed.tokenizer;
  const bool add_special = data[0] & 0x40, skip_special = data[0] & 0x80;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);

  const std::vector<int32_t> ids = tok.encode(text, add_special);
  check_ids_in_range(tok, ids);
  if (fuzzed.exact_round_trip && !skip_special) {
    // Raw bytes come back, ill-formed ones as U+FFFD (decode returns valid UTF-8).
    FUZZ_CHECK(tok.decode(ids, false) == strata::text::utf8_lossy(text), "byte-level decode(encode(text)) != text");
  }
  check_streaming(tok, ids, skip_special);
  check_streaming(tok, ids_from_bytes(data + 1, size - 1, tok.vocab_size()), skip_special);
  return 0;
}
