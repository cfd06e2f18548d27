#include "strata/server/json_parse.h"

#include <unordered_map>
#include <vector>

#include <fmt/format.h>

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;
using Items = Json::object_t::Container;  // ordered_map's vector of (key, value)

// nlohmann's SAX events to an ordered_json. Keys are appended to the object's vector
// directly; repeats are found through a per-object index, built once an object has a
// few keys (below that a scan is cheaper).
class Builder {
 public:
  explicit Builder(int max_depth) : max_depth_(max_depth) {}

  bool null() { return put(Json()); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return false; }  // only binary formats have these
  bool start_object(size_t) { return open(Json::object()); }
  bool start_array(size_t) { return open(Json::array()); }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <typename Exception>
  bool parse_error(size_t, const std::string&, const Exception& e) {
    error_ = e.what();
    return false;
  }

  Json& result() { return root_; }
  const std::string& error() const { return error_; }
  bool too_deep() const { return too_deep_; }

 private:
  struct Open {
    Json* value;
    std::unordered_map<std::string, size_t> index;  // objects past kIndexFrom keys
  };
  static constexpr size_t kIndexFrom = 16;

  // Places `v` where the next value goes; returns where it went.
  Json* place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Open& top = stack_.back();
    if (top.value->is_array()) {
      top.value->get_ref<Json::array_t&>().push_back(std::move(v));
      return &top.value->back();
    }
    Items& items = top.value->get_ref<Json::object_t&>();
    if (const std::optional<size_t> at = find_key(top, items)) {
      items[*at].second = std::move(v);
      return &items[*at].second;
    }
    if (!top.index.empty() || items.size() + 1 == kIndexFrom) {
      if (top.index.empty())
        for (size_t i = 0; i < items.size(); ++i) top.index.emplace(items[i].first, i);
      top.index.emplace(key_, items.size());
    }
    items.emplace_back(std::move(key_), std::move(v));
    return &items.back().second;
  }

  std::optional<size_t> find_key(const Open& top, const Items& items) const {
    if (!top.index.empty()) {
      const auto it = top.index.find(key_);
      return it == top.index.end() ? std::nullopt : std::optional<size_t>(it->second);
    }
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i].first == key_) return i;
    return std::nullopt;
  }

  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  bool open(Json container) {
    if (static_cast<int>(stack_.size()) >= max_depth_) {
      error_ = fmt::format("arrays and objects nest more than {} levels deep", max_depth_);
      too_deep_ = true;
      return false;
    }
    stack_.push_back({.value = place(std::move(container))});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  int max_depth_;
  Json root_;
  std::vector<Open> stack_;  // the containers open now, outermost first
  std::string key_;
  std::string error_;
  bool too_deep_ = false;
};

}  // namespace

ParsedJson parse_json(std::string_view text, int max_depth) {
  Builder builder(max_depth);
  if (!Json::sax_parse(text, &builder)) return {.error = builder.error(), .too_deep = builder.too_deep()};
  return {.value = std::move(builder.result())};
}

}  // namespace strata::server
