// PCRE2 wrapper. Oniguruma (what Hugging Face tokenizers uses) and PCRE2 agree on the
// split patterns in use: \p{..} classes, (?i:..), lookahead, possessive-free alternations.
#include "strata/text/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "strata/core/error.h"
#include "strata/text/utf8.h"

namespace strata::text {
namespace {

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }

// One match-data block per thread, reused across calls (it only holds the ovector).
pcre2_match_data* thread_match_data() {
  struct Holder {
    pcre2_match_data* data = pcre2_match_data_create(4, nullptr);
    ~Holder() { pcre2_match_data_free(data); }
  };
  thread_local Holder holder;
  return holder.data;
}

}  // namespace

Regex::Regex(const std::string& pattern) : pattern_(pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  const uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   options, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    fail("tokenizer regex '{}' does not compile at offset {}: {}", pattern, error_offset,
         reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is absent
  code_ = code;
}

Regex::~Regex() { pcre2_code_free(as_code(code_)); }

void Regex::find_all(std::string_view text, std::vector<ByteRange>& matches) const {
  pcre2_match_data* md = thread_match_data();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = pcre2_match(as_code(code_), subject, text.size(), pos, 0, md, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail("tokenizer regex '{}' failed with PCRE2 error {}", pattern_, rc);
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    if (ov[1] > ov[0]) {
      matches.emplace_back(ov[0], ov[1]);
      pos = ov[1];
    } else {  // empty match: step over one character (or one ill-formed byte)
      const size_t n = utf8_sequence_length(text, ov[0]);
      pos = ov[0] + (n == 0 ? 1 : n);
    }
  }
}

std::string Regex::replace_all(std::string_view text, std::string_view replacement) const {
  std::vector<ByteRange> matches;
  find_all(text, matches);
  std::string out;
  size_t prev = 0;
  for (const auto& [begin, end] : matches) {
    out.append(text.substr(prev, begin - prev));
    out.append(replacement);
    prev = end;
  }
  out.append(text.substr(prev));
  return out;
}

}  // namespace strata::text
