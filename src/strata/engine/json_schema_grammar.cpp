#include "strata/engine/json_schema_grammar.h"

#include <algorithm>

#include "strata/engine/json_lexing.h"

namespace strata {
namespace {

using namespace json_lexing;
using Kind = CompiledSchema::Kind;

// The last property a key may name after `lo`: properties are written in order, so none
// past the first required one.
size_t last_candidate(const CompiledSchema::Node& node, size_t lo) {
  for (size_t p = lo; p < node.properties.size(); ++p)
    if (node.properties[p].required) return p;
  return node.properties.size() - 1;
}

bool required_from(const CompiledSchema::Node& node, size_t lo) {
  for (size_t p = lo; p < node.properties.size(); ++p)
    if (node.properties[p].required) return true;
  return false;
}

}  // namespace

bool JsonSchemaGrammar::feed(unsigned char c) {
  const char one = static_cast<char>(c);
  return feed_all(*this, std::string_view(&one, 1));
}

bool JsonSchemaGrammar::feed(std::string_view bytes) { return feed_all(*this, bytes); }

bool JsonSchemaGrammar::step(unsigned char c) {
  if (leaf_ == Leaf::kNone && is_space(c)) return space(c);
  if (!is_space(c)) run_spaces_ = run_breaks_ = 0;
  if (done_) return false;
  if (leaf_ != Leaf::kNone) return leaf_step(c);
  if (depth_ > 0) return frame_step(c);
  return start_value(schema_->root, c);
}

// Pretty-printing needs one line break and the indentation (4 spaces a level, 32 at most);
// a run without a break needs 2 spaces at most (", ", " : "). More is padding.
bool JsonSchemaGrammar::space(unsigned char c) {
  if (c == '\r' || c == '\n') {  // "\n", "\r\n" or "\r": bit 0 a CR, bit 1 an LF
    const uint8_t bit = c == '\r' ? 1 : 2;
    if ((c == '\r' && run_breaks_ != 0) || (run_breaks_ & bit) != 0) return false;
    if (bit == 2 || run_breaks_ == 0) run_spaces_ = 0;  // indentation counts from the break
    run_breaks_ |= bit;
    return true;
  }
  const int limit = run_breaks_ != 0 ? std::min(4 * (depth_ + 1), 32) : 2;
  return ++run_spaces_ <= limit;
}

bool JsonSchemaGrammar::value_done() {
  if (depth_ == 0) done_ = true;  // else the frame's phase already says what comes next
  return true;
}

bool JsonSchemaGrammar::start_value(int32_t node_index, unsigned char c) {
  const CompiledSchema::Node& node = schema_->nodes[node_index];
  switch (node.kind) {
    case Kind::kObject:
    case Kind::kArray:
      if (c != (node.kind == Kind::kObject ? '{' : '[') || depth_ == stack_.size()) return false;
      stack_[depth_++] = Frame{.node = node_index, .phase = 1, .index = 0};
      return true;
    case Kind::kString:
      if (c != '"') return false;
      leaf_ = Leaf::kString;
      leaf_node_ = node_index;
      string_ = {};
      num_chars_ = 0;
      pattern_ = node.pattern ? GrammarState(node.pattern.get()) : GrammarState();
      return true;
    case Kind::kNumber:
    case Kind::kInteger:
      leaf_ = Leaf::kNumber;
      leaf_node_ = node_index;
      return number_.start(c, node.bounds);
    case Kind::kAnyOf:
      for (int32_t alternative : node.alternatives)
        if (schema_->nodes[alternative].first_bytes.test(c)) return start_value(alternative, c);
      return false;
    case Kind::kChoice:
      candidates_ = 0;
      for (size_t k = 0; k < node.choices.size(); ++k)
        if (static_cast<unsigned char>(node.choices[k][0]) == c) candidates_ |= uint64_t{1} << k;
      if (candidates_ == 0) return false;
      leaf_ = Leaf::kChoice;
      leaf_node_ = node_index;
      text_pos_ = 1;
      return true;
  }
  return false;
}

bool JsonSchemaGrammar::close_frame() {
  --depth_;
  return value_done();
}

bool JsonSchemaGrammar::frame_step(unsigned char c) {
  Frame& f = stack_[depth_ - 1];
  const CompiledSchema::Node& node = schema_->nodes[f.node];
  if (node.kind == Kind::kObject) return object_step(f, node, c);
  return array_step(f, node, c);
}

// Array phases: 1 after '[', 2 after an item, 3 after ','. f.index: items so far.
bool JsonSchemaGrammar::array_step(Frame& f, const CompiledSchema::Node& node, unsigned char c) {
  const bool may_close = f.index >= node.min_items, may_add = f.index < node.max_items;
  if (f.phase == 1 && c == ']') return may_close && close_frame();
  if (f.phase == 2) {
    if (c == ',' && may_add) { f.phase = 3; return true; }
    return c == ']' && may_close && close_frame();
  }
  if (!may_add) return false;
  f.phase = 2;
  ++f.index;
  return start_value(node.items, c);
}

// Object phases: 1 after '{', 5 after ',' (a key must follow), 2 after a key, 3 after ':',
// 4 after a value. f.index: in 1 and 5 the first property still allowed; from 2 on the
// property being written. A map (node.additional) takes any key, any number of times.
bool JsonSchemaGrammar::object_step(Frame& f, const CompiledSchema::Node& node, unsigned char c) {
  const bool map = node.additional >= 0;
  switch (f.phase) {
    case 1:
    case 5:
      if (c == '}' && f.phase == 1 && (map || !required_from(node, f.index))) return close_frame();
      return c == '"' && start_key(f, node);
    case 2: if (c != ':') return false; f.phase = 3; return true;
    case 3: f.phase = 4; return start_value(map ? node.additional : node.properties[f.index].node, c);
    default:
      if (c == '}' && (map || !required_from(node, f.index + 1u))) return close_frame();
      if (c != ',' || (!map && f.index + 1u >= node.properties.size())) return false;
      if (!map) ++f.index;
      f.phase = 5;
      return true;
  }
}

// After a key's opening quote.
bool JsonSchemaGrammar::start_key(Frame& f, const CompiledSchema::Node& node) {
  if (node.additional >= 0) {
    leaf_ = Leaf::kFreeKey;
    string_ = {};
    return true;
  }
  if (f.index >= node.properties.size()) return false;
  leaf_ = Leaf::kKey;
  leaf_node_ = f.index;
  text_pos_ = 1;
  return true;
}

// Inside a listed key: leaf_node_ is the first candidate property whose key starts with the
// bytes read so far (keys end in a quote, so none is a prefix of another).
bool JsonSchemaGrammar::key_step(unsigned char c) {
  Frame& f = stack_[depth_ - 1];
  const CompiledSchema::Node& node = schema_->nodes[f.node];
  const std::string& matched = node.properties[static_cast<size_t>(leaf_node_)].key;
  const size_t last = last_candidate(node, f.index);
  for (size_t p = static_cast<size_t>(leaf_node_); p <= last; ++p) {
    const std::string& key = node.properties[p].key;
    if (key.size() <= text_pos_ || static_cast<unsigned char>(key[text_pos_]) != c ||
        key.compare(0, text_pos_, matched, 0, text_pos_) != 0)
      continue;
    leaf_node_ = static_cast<int32_t>(p);
    if (++text_pos_ == key.size()) {
      leaf_ = Leaf::kNone;
      f.index = static_cast<uint16_t>(p);
      f.phase = 2;
    }
    return true;
  }
  return false;
}

bool JsonSchemaGrammar::leaf_step(unsigned char c) {
  switch (leaf_) {
    case Leaf::kKey: return key_step(c);
    case Leaf::kString: return string_step(c);
    case Leaf::kFreeKey:
      switch (string_.step(c)) {
        case StringBody::Step::kTaken: return true;
        case StringBody::Step::kRefused: return false;
        case StringBody::Step::kClosed: break;
      }
      leaf_ = Leaf::kNone;
      stack_[depth_ - 1].phase = 2;
      return true;
    case Leaf::kChoice: {
      const std::vector<std::string>& choices = schema_->nodes[leaf_node_].choices;
      uint64_t next = 0;
      bool complete = false;
      for (size_t k = 0; k < choices.size(); ++k)
        if ((candidates_ >> k & 1) && text_pos_ < choices[k].size() &&
            static_cast<unsigned char>(choices[k][text_pos_]) == c) {
          next |= uint64_t{1} << k;
          complete = complete || text_pos_ + 1 == choices[k].size();
        }
      if (next == 0) return false;
      candidates_ = next;
      ++text_pos_;
      if (complete) { leaf_ = Leaf::kNone; return value_done(); }
      return true;
    }
    case Leaf::kNumber:
      switch (number_.step(c, schema_->nodes[leaf_node_].bounds)) {
        case NumberStep::kTaken: return true;
        case NumberStep::kRefused: return false;
        case NumberStep::kEnded: break;
      }
      leaf_ = Leaf::kNone;
      value_done();
      return step(c);  // the byte after the number, read where the number ended
    case Leaf::kNone: break;
  }
  return false;
}

// A string value's byte: length bounds count characters (a UTF-8 lead byte or an escape
// starts one); a pattern sees the unescaped text and must match whole at the closing quote.
bool JsonSchemaGrammar::string_step(unsigned char c) {
  const CompiledSchema::Node& node = schema_->nodes[leaf_node_];
  const bool starts_char = !string_.in_escape() && c != '"' && (c < 0x80 || c >= 0xC0);
  if (starts_char && num_chars_ >= node.max_length) return false;
  if (node.pattern && !pattern_step(c)) return false;
  switch (string_.step(c)) {
    case StringBody::Step::kTaken:
      if (starts_char && node.length_bounded()) ++num_chars_;
      return true;
    case StringBody::Step::kRefused: return false;
    case StringBody::Step::kClosed: break;
  }
  if (num_chars_ < node.min_length || (node.pattern && !pattern_.can_end())) return false;
  leaf_ = Leaf::kNone;
  return value_done();
}

bool JsonSchemaGrammar::pattern_step(unsigned char c) {
  static constexpr std::pair<char, char> kEscapes[] = {{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'n', '\n'},
                                                       {'t', '\t'}, {'r', '\r'}, {'b', '\b'}, {'f', '\f'}};
  if (string_.in_escape()) {
    for (const auto& [escape, byte] : kEscapes)
      if (c == static_cast<unsigned char>(escape)) return pattern_.feed(static_cast<unsigned char>(byte));
    return false;  // \u: not taken inside a pattern
  }
  if (c == '"') return true;  // the close: string_step checks the pattern may end
  if (c == '\\') {
    for (const auto& [escape, byte] : kEscapes)
      if (pattern_.accepts_byte(static_cast<unsigned char>(byte))) return true;
    return false;
  }
  return pattern_.feed(c);
}

std::string JsonSchemaGrammar::key() const {
  std::string out = {static_cast<char>(depth_), static_cast<char>(leaf_), static_cast<char>(done_),
                     static_cast<char>(string_.in_escape()), static_cast<char>(run_spaces_),
                     static_cast<char>(run_breaks_)};
  out.append(reinterpret_cast<const char*>(&string_), sizeof(string_));
  for (const int32_t v : {leaf_node_, static_cast<int32_t>(text_pos_), static_cast<int32_t>(num_chars_)})
    out.append(reinterpret_cast<const char*>(&v), sizeof(v));
  out.append(reinterpret_cast<const char*>(&candidates_), sizeof(candidates_));
  for (uint8_t d = 0; d < depth_; ++d) {
    const Frame& f = stack_[d];
    out.append(reinterpret_cast<const char*>(&f.node), sizeof(f.node));
    out += static_cast<char>(f.phase);
    out.append(reinterpret_cast<const char*>(&f.index), sizeof(f.index));
  }
  if (leaf_ == Leaf::kNumber) number_.append_key(out);
  out += pattern_.key();  // last: its length varies
  return out;
}

}  // namespace strata
