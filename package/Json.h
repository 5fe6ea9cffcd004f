//===- package/Json.h - A small JSON value, parser and writer ---*- C++ -*-===//
//
// Packages and the autotune cache are JSON documents. This is a deliberately
// small implementation with the properties those files need:
//   - integers are kept exactly as int64 (sizes, hashes, constexpr values),
//     other numbers as double;
//   - objects keep insertion order, so files written by the runtime are stable
//     and diff-friendly;
//   - the parser never crashes on malformed input (depth limit, bounds checks)
//     and reports errors as "origin:line:column: message".
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_JSON_H
#define TESSEL_PACKAGE_JSON_H

#include "package/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace tessel {

/// A JSON syntax error; what() is "origin:line:column: message".
class JsonError : public Error {
public:
  JsonError(const std::string &message, int line, int column)
      : Error(message), line_(line), column_(column) {}
  int line() const { return line_; }
  int column() const { return column_; }

private:
  int line_, column_;
};

class Json {
public:
  enum class Kind { Null, Bool, Int, Double, String, Array, Object };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  /// Members in insertion order; keys are unique.
  using Object = std::vector<Member>;

  /// Nesting deeper than this is rejected by the parser (stack safety).
  static constexpr int kMaxDepth = 256;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : value_(value) {}
  Json(int value) : value_(int64_t(value)) {}
  Json(long value) : value_(int64_t(value)) {}
  Json(long long value) : value_(int64_t(value)) {}
  Json(unsigned value) : value_(int64_t(value)) {}
  Json(unsigned long value) { setUnsigned(value); }
  Json(unsigned long long value) { setUnsigned(value); }
  Json(double value) : value_(value) {}
  Json(const char *value) : value_(std::string(value)) {}
  Json(std::string_view value) : value_(std::string(value)) {}
  Json(std::string value) : value_(std::move(value)) {}
  Json(Array value) : value_(std::move(value)) {}
  Json(Object value) : value_(std::move(value)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  Kind kind() const { return Kind(value_.index()); }
  bool isNull() const { return kind() == Kind::Null; }
  bool isBool() const { return kind() == Kind::Bool; }
  bool isInt() const { return kind() == Kind::Int; }
  bool isDouble() const { return kind() == Kind::Double; }
  bool isNumber() const { return isInt() || isDouble(); }
  bool isString() const { return kind() == Kind::String; }
  bool isArray() const { return kind() == Kind::Array; }
  bool isObject() const { return kind() == Kind::Object; }

  /// Accessors throw tessel::Error when the kind does not match.
  bool asBool() const;
  int64_t asInt() const;
  /// Ints convert to double.
  double asDouble() const;
  const std::string &asString() const;
  const Array &asArray() const;
  Array &asArray();
  const Object &asObject() const;
  Object &asObject();

  /// Object member lookup; nullptr when absent or when this is not an object.
  const Json *find(std::string_view key) const;
  Json *find(std::string_view key);
  /// Object member access, inserting null when absent (turns null into {}).
  Json &operator[](std::string_view key);
  /// Sets an object member (replacing an existing one in place).
  void set(std::string_view key, Json value);
  /// Appends to an array (turns null into []).
  void push(Json value);
  /// Elements of an array or members of an object; 0 otherwise.
  size_t size() const;

  /// Parses one JSON document (surrounding whitespace allowed). Throws
  /// JsonError naming origin, line and column.
  static Json parse(std::string_view text, std::string_view origin = "<json>");

  /// Compact single-line text.
  std::string dump() const;
  /// Pretty text indented by `indent` spaces; arrays of scalars stay on one
  /// line. Non-finite doubles are written as null (JSON has no NaN).
  std::string pretty(int indent = 2) const;

  static const char *kindName(Kind kind);

  friend bool operator==(const Json &a, const Json &b) {
    return a.value_ == b.value_;
  }
  friend bool operator!=(const Json &a, const Json &b) { return !(a == b); }

private:
  // Unsigned values beyond int64 can only be kept approximately, as double.
  void setUnsigned(unsigned long long value) {
    if (value <= uint64_t(INT64_MAX))
      value_ = int64_t(value);
    else
      value_ = double(value);
  }

  std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array,
               Object>
      value_;
};

/// Appends `text` to `out` as a quoted JSON string literal.
void appendJsonString(std::string &out, std::string_view text);

} // namespace tessel

#endif // TESSEL_PACKAGE_JSON_H
