// framework/bounded_json.cpp — parse_bounded_json: nlohmann's SAX lexer feeding a tree builder
// that counts values, tracks depth and finds duplicate keys as it goes. (nlohmann's own parse
// with a callback, used before, rescans the parent object at every object's end: quadratic in
// the number of entries.)
#include "bounded_json.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace qkv {

namespace {

using nlohmann::json;

std::string quoted_key(const std::string& key) {
  // Keys come from the file: a long one is cut so that the message stays a line.
  return "'" + (key.size() <= 60 ? key : key.substr(0, 57) + "...") + "'";
}

// Builds the tree with each container inserted into its parent when it opens, so that the stack
// holds pointers into the tree (a std::map node and the last element of a vector do not move
// while their container is the open one).
class TreeBuilder {
 public:
  explicit TreeBuilder(const JsonLimits& limits) : limits_(limits) {}

  bool null() { return place(json(nullptr)); }
  bool boolean(bool value) { return place(json(value)); }
  bool number_integer(json::number_integer_t value) { return place(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return place(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return place(json(value)); }
  bool string(json::string_t& value) { return place(json(std::move(value))); }
  bool binary(json::binary_t&) { throw std::runtime_error("holds binary data, which JSON text cannot"); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& key) {
    if (open_.size() == 1) top_key_ = key;
    pending_key_ = std::move(key);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    throw std::runtime_error(std::string("is not valid JSON: ") + error.what());
  }

  json take() { return std::move(root_); }

 private:
  // Puts `value` where the parser is (the root, the next array element or the pending key's
  // value) and returns where it went.
  json* insert(json value) {
    if (++values_ > limits_.max_values)
      throw std::runtime_error("holds more than " + std::to_string(limits_.max_values) + " values");
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *open_.back();
    if (parent.is_array()) {
      auto& elements = parent.get_ref<json::array_t&>();
      elements.push_back(std::move(value));
      return &elements.back();
    }
    auto& members = parent.get_ref<json::object_t&>();
    auto [where, inserted] = members.emplace(pending_key_, std::move(value));
    if (!inserted)
      throw std::runtime_error("has duplicate key " + quoted_key(pending_key_) +
                               (open_.size() > 1 ? " inside entry " + quoted_key(top_key_) : std::string()));
    return &where->second;
  }

  bool place(json value) { return insert(std::move(value)) != nullptr; }

  bool open(json container) {
    if (static_cast<int>(open_.size()) >= limits_.max_depth)
      throw std::runtime_error("nests deeper than " + std::to_string(limits_.max_depth) +
                               (limits_.max_depth == 1 ? " level" : " levels"));
    open_.push_back(insert(std::move(container)));
    return true;
  }

  bool close() { return open_.pop_back(), true; }

  const JsonLimits& limits_;
  json root_;
  std::vector<json*> open_;  // the containers not yet closed, outermost first
  std::string pending_key_, top_key_;
  size_t values_ = 0;
};

}  // namespace

json parse_bounded_json(std::string_view text, const JsonLimits& limits) {
  TreeBuilder builder(limits);
  json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                  /*ignore_comments=*/false);
  return builder.take();
}

}  // namespace qkv
