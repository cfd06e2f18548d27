// UTF-8 and Python str helpers for the Jinja builtins: code-point splitting (len, slicing,
// reversing count characters, not bytes) and Python's whitespace and case rules (ASCII case).
#pragma once

#include <string>
#include <vector>

namespace strata::jinja {

std::vector<std::string> utf8_chars(const std::string& s);  // one entry per code point
size_t utf8_length(const std::string& s);

bool is_python_space(unsigned char c);
// str.strip/lstrip/rstrip: `chars` empty -> whitespace, else any of those code points.
std::string python_strip(const std::string& s, const std::string* chars, bool left, bool right);
std::vector<std::string> python_split(const std::string& s, const std::string* sep,
                                      long long maxsplit);
std::string ascii_upper(std::string s);
std::string ascii_lower(std::string s);
std::string python_title(const std::string& s);
std::string python_capitalize(const std::string& s);
std::string replace_all(const std::string& s, const std::string& from, const std::string& to,
                        long long count);
// HTML escaping as markupsafe does it: & < > " '
std::string html_escape(const std::string& s);

}  // namespace strata::jinja
