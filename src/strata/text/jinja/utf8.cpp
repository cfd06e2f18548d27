// UTF-8 and Python str helpers for the Jinja builtins.
#include "strata/text/jinja/utf8.h"

#include <algorithm>

namespace strata::jinja {

static size_t char_width(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;  // a stray byte counts as one character rather than failing
}

std::vector<std::string> utf8_chars(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const size_t n = std::min(char_width(static_cast<unsigned char>(s[i])), s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

size_t utf8_length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool is_python_space(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

std::string python_strip(const std::string& s, const std::string* chars, bool left, bool right) {
  std::vector<std::string> cs = utf8_chars(s);
  std::vector<std::string> set;
  if (chars) set = utf8_chars(*chars);
  auto strip_it = [&](const std::string& ch) {
    if (!chars) return ch.size() == 1 && is_python_space(static_cast<unsigned char>(ch[0]));
    return std::find(set.begin(), set.end(), ch) != set.end();
  };
  size_t begin = 0, end = cs.size();
  if (left) {
    while (begin < end && strip_it(cs[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strip_it(cs[end - 1])) --end;
  }
  std::string out;
  for (size_t i = begin; i < end; ++i) out += cs[i];
  return out;
}

std::vector<std::string> python_split(const std::string& s, const std::string* sep,
                                      long long maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t start = 0;
    while (maxsplit < 0 || static_cast<long long>(out.size()) < maxsplit) {
      const size_t pos = s.find(*sep, start);
      if (pos == std::string::npos) break;
      out.push_back(s.substr(start, pos - start));
      start = pos + sep->size();
    }
    out.push_back(s.substr(start));
    return out;
  }
  size_t i = 0;
  while (true) {
    while (i < s.size() && is_python_space(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    if (maxsplit >= 0 && static_cast<long long>(out.size()) >= maxsplit) {
      size_t end = s.size();
      while (end > i && is_python_space(static_cast<unsigned char>(s[end - 1]))) --end;
      out.push_back(s.substr(i, end - i));
      break;
    }
    size_t j = i;
    while (j < s.size() && !is_python_space(static_cast<unsigned char>(s[j]))) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string ascii_upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

static bool is_ascii_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string python_title(const std::string& s) {
  std::string out = s;
  bool prev_cased = false;
  for (char& c : out) {
    if (is_ascii_alpha(c)) {
      c = prev_cased ? ascii_lower(std::string(1, c))[0] : ascii_upper(std::string(1, c))[0];
      prev_cased = true;
    } else {
      prev_cased = static_cast<unsigned char>(c) >= 0x80 && prev_cased;
    }
  }
  return out;
}

std::string python_capitalize(const std::string& s) {
  if (s.empty()) return s;
  return ascii_upper(s.substr(0, 1)) + ascii_lower(s.substr(1));
}

std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        long long count) {
  std::string out;
  size_t start = 0;
  long long done = 0;
  if (from.empty()) {  // Python inserts `to` around every character
    for (const std::string& ch : utf8_chars(s)) {
      if (count >= 0 && done >= count) {
        out += ch;
        continue;
      }
      out += to + ch;
      ++done;
    }
    return (count < 0 || done < count) ? out + to : out;
  }
  while (count < 0 || done < count) {
    const size_t pos = s.find(from, start);
    if (pos == std::string::npos) break;
    out += s.substr(start, pos - start) + to;
    start = pos + from.size();
    ++done;
  }
  return out + s.substr(start);
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace strata::jinja
