// jinja2-compatible lexer: text/tag splitting with whitespace control, then the tokens inside
// each tag. Tag ends only count outside brackets, so `{{ {'a': {}} }}` lexes as jinja2 does.
#include "strata/text/jinja/lexer.h"

#include <algorithm>
#include <cstring>

#include "strata/core/error.h"
#include "strata/text/jinja/string_literal.h"

namespace strata::jinja {
namespace {

std::string normalize_newlines(const std::string& source, bool keep_trailing_newline) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

enum class TagKind { kVar, kBlock, kComment };

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& options)
      : src_(std::move(source)), options_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const size_t tag = find_tag(pos_);
      std::string text = src_.substr(pos_, tag - pos_);
      if (tag == src_.size()) {
        emit_text(std::move(text), pos_);
        break;
      }
      const TagKind kind = src_[tag + 1] == '{' ? TagKind::kVar
                           : src_[tag + 1] == '%' ? TagKind::kBlock : TagKind::kComment;
      const char sign = tag + 2 < src_.size() ? src_[tag + 2] : '\0';
      apply_left_strip(text, kind, sign);
      emit_text(std::move(text), pos_);
      pos_ = tag + 2 + ((sign == '-' || sign == '+') ? 1 : 0);
      if (kind == TagKind::kComment) lex_comment(tag);
      else if (kind == TagKind::kBlock && try_raw(tag)) continue;
      else lex_tag(kind, tag);
    }
    tokens_.push_back(make(TokenType::kEof, "", src_.size()));
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) {
        return i;
      }
    }
    return src_.size();
  }

  Token make(TokenType type, std::string text, size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
    return Token{.type = type, .text = std::move(text),
                 .line = static_cast<int>(it - line_starts_.begin()) + 1,
                 .column = static_cast<int>(offset - *it) + 1};
  }

  [[noreturn]] void error(size_t offset, const std::string& what) const {
    const Token t = make(TokenType::kEof, "", offset);
    fail("template line {}, column {}: {}", t.line, t.column, what);
  }

  void apply_left_strip(std::string& text, TagKind kind, char sign) const {
    if (sign == '-') {
      size_t end = text.size();
      while (end > 0 && is_space(text[end - 1])) --end;
      text.resize(end);
    } else if (sign != '+' && options_.lstrip_blocks && kind != TagKind::kVar) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if (l_pos == 0 && !line_starting_) return;
      if (l_pos < text.size() && std::all_of(text.begin() + l_pos, text.end(), is_space)) {
        text.resize(l_pos);
      }
    }
  }

  void emit_text(std::string text, size_t offset) {
    if (!text.empty()) tokens_.push_back(make(TokenType::kText, std::move(text), offset));
  }

  // After a tag end at `end_start` of length `len`: strip per the sign, trim_blocks.
  void finish_tag(size_t end_start, size_t len, char sign, bool is_block_like) {
    pos_ = end_start + len;
    if (sign == '-') {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
    } else if (sign != '+' && is_block_like && options_.trim_blocks && pos_ < src_.size() &&
               src_[pos_] == '\n') {
      ++pos_;
    }
    line_starting_ = pos_ > 0 && src_[pos_ - 1] == '\n';
  }

  void lex_comment(size_t tag) {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) error(tag, "comment '{#' is never closed with '#}'");
    const char sign = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    finish_tag(end, 2, sign, true);
  }

  bool try_raw(size_t tag);
  void lex_tag(TagKind kind, size_t tag);
  bool at_tag_end(TagKind kind, size_t* len, char* sign) const;
  void lex_number(size_t start);

  std::string src_;
  LexOptions options_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  bool line_starting_ = true;
};

// `{% raw %}...{% endraw %}`: everything between is text, with the tags' own strip signs.
bool Lexer::try_raw(size_t tag) {
  size_t p = pos_;
  while (p < src_.size() && is_space(src_[p])) ++p;
  if (src_.compare(p, 3, "raw") != 0 || (p + 3 < src_.size() && is_name_char(src_[p + 3]))) {
    return false;
  }
  p += 3;
  while (p < src_.size() && is_space(src_[p])) ++p;
  char sign = '\0';
  if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
  if (src_.compare(p, 2, "%}") != 0) return false;
  finish_tag(p, 2, sign, true);
  const size_t body = pos_;
  for (size_t q = find_tag(body); q < src_.size(); q = find_tag(q + 1)) {
    if (src_[q + 1] != '%') continue;
    size_t r = q + 2;
    const char left = r < src_.size() ? src_[r] : '\0';
    if (left == '-' || left == '+') ++r;
    while (r < src_.size() && is_space(src_[r])) ++r;
    if (src_.compare(r, 6, "endraw") != 0) continue;
    r += 6;
    while (r < src_.size() && is_space(src_[r])) ++r;
    char right = '\0';
    if (r < src_.size() && (src_[r] == '-' || src_[r] == '+')) right = src_[r++];
    if (src_.compare(r, 2, "%}") != 0) continue;
    std::string text = src_.substr(body, q - body);
    if (left == '-') {
      while (!text.empty() && is_space(text.back())) text.pop_back();
    }
    emit_text(std::move(text), body);
    finish_tag(r, 2, right, true);
    return true;
  }
  error(tag, "'{% raw %}' is never closed with '{% endraw %}'");
}

bool Lexer::at_tag_end(TagKind kind, size_t* len, char* sign) const {
  const char* close = kind == TagKind::kVar ? "}}" : "%}";
  *sign = '\0';
  if ((src_[pos_] == '-' || src_[pos_] == '+') && src_.compare(pos_ + 1, 2, close) == 0) {
    if (src_[pos_] == '+' && kind == TagKind::kVar) return false;
    *sign = src_[pos_];
    *len = 3;
    return true;
  }
  *len = 2;
  return src_.compare(pos_, 2, close) == 0;
}

void Lexer::lex_number(size_t start) {
  size_t p = start;
  auto digits = [&] {
    while (p < src_.size() && (is_digit(src_[p]) || (src_[p] == '_' && p + 1 < src_.size() &&
                                                     is_digit(src_[p + 1])))) {
      ++p;
    }
  };
  digits();
  bool is_float = false;
  if (p + 1 < src_.size() && src_[p] == '.' && is_digit(src_[p + 1])) {
    is_float = true;
    ++p;
    digits();
  }
  if (p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
    size_t q = p + 1;
    if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
    if (q < src_.size() && is_digit(src_[q])) {
      is_float = true;
      p = q;
      digits();
    }
  }
  std::string text = src_.substr(start, p - start);
  std::string clean;
  for (char c : text) {
    if (c != '_') clean += c;
  }
  Token t = make(is_float ? TokenType::kFloat : TokenType::kInt, text, start);
  try {
    if (is_float) t.float_value = std::stod(clean);
    else t.int_value = std::stoll(clean);
  } catch (const std::exception&) {
    error(start, "number '" + text + "' is out of range");
  }
  tokens_.push_back(std::move(t));
  pos_ = p;
}

void Lexer::lex_tag(TagKind kind, size_t tag) {
  tokens_.push_back(make(kind == TagKind::kVar ? TokenType::kVarBegin : TokenType::kBlockBegin,
                         "", tag));
  std::vector<char> balance;
  static const char* kOps[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%",
                               "~", "<", ">", "=", ".", ",", ":", "|", "(", ")", "[", "]",
                               "{", "}"};
  while (true) {
    while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
    if (pos_ >= src_.size()) {
      error(tag, kind == TagKind::kVar ? "'{{' is never closed with '}}'"
                                       : "'{%' is never closed with '%}'");
    }
    size_t len = 0;
    char sign = '\0';
    if (balance.empty() && at_tag_end(kind, &len, &sign)) {
      tokens_.push_back(make(kind == TagKind::kVar ? TokenType::kVarEnd : TokenType::kBlockEnd,
                             "", pos_));
      finish_tag(pos_, len, sign, kind == TagKind::kBlock);
      return;
    }
    const char c = src_[pos_];
    if (is_name_start(c)) {
      size_t p = pos_;
      while (p < src_.size() && is_name_char(src_[p])) ++p;
      tokens_.push_back(make(TokenType::kName, src_.substr(pos_, p - pos_), pos_));
      pos_ = p;
    } else if (is_digit(c)) {
      lex_number(pos_);
    } else if (c == '\'' || c == '"') {
      std::string error_text;
      const size_t start = pos_;
      std::optional<std::string> value = read_string_literal(src_, &pos_, &error_text);
      if (!value) error(start, error_text);
      tokens_.push_back(make(TokenType::kString, std::move(*value), start));
    } else {
      const char* op = nullptr;
      for (const char* candidate : kOps) {
        if (src_.compare(pos_, std::strlen(candidate), candidate) == 0) {
          op = candidate;
          break;
        }
      }
      if (!op) error(pos_, std::string("unexpected character '") + c + "' inside a tag");
      if (std::strchr("([{", op[0]) && op[1] == '\0') balance.push_back(op[0]);
      if (std::strchr(")]}", op[0]) && op[1] == '\0') {
        const char want = op[0] == ')' ? '(' : op[0] == ']' ? '[' : '{';
        if (balance.empty() || balance.back() != want) {
          error(pos_, std::string("unexpected '") + op[0] + "'");
        }
        balance.pop_back();
      }
      tokens_.push_back(make(TokenType::kOp, op, pos_));
      pos_ += std::strlen(op);
    }
  }
}

}  // namespace

std::vector<Token> lex(const std::string& source, const LexOptions& options) {
  return Lexer(normalize_newlines(source, options.keep_trailing_newline), options).run();
}

}  // namespace strata::jinja
