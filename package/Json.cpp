//===- package/Json.cpp - A small JSON value, parser and writer -----------===//
//
// The parser is a recursive-descent parser over a string_view with an explicit
// depth limit; every read is bounds-checked, so arbitrary bytes produce a
// JsonError, never a crash (the package loader and the autotune cache read
// files that may be truncated or corrupt).
//
//===----------------------------------------------------------------------===//
#include "package/Json.h"

#include <charconv>
#include <cstdio>
#include <cmath>
#include <unordered_set>

using namespace tessel;

const char *Json::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Int:
    return "an integer";
  case Kind::Double:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

static Error kindError(Json::Kind want, Json::Kind got) {
  return Error(std::string("JSON value is ") + Json::kindName(got) +
               ", expected " + Json::kindName(want));
}

bool Json::asBool() const {
  if (!isBool())
    throw kindError(Kind::Bool, kind());
  return std::get<bool>(value_);
}

int64_t Json::asInt() const {
  if (!isInt())
    throw kindError(Kind::Int, kind());
  return std::get<int64_t>(value_);
}

double Json::asDouble() const {
  if (isInt())
    return double(std::get<int64_t>(value_));
  if (!isDouble())
    throw kindError(Kind::Double, kind());
  return std::get<double>(value_);
}

const std::string &Json::asString() const {
  if (!isString())
    throw kindError(Kind::String, kind());
  return std::get<std::string>(value_);
}

const Json::Array &Json::asArray() const {
  if (!isArray())
    throw kindError(Kind::Array, kind());
  return std::get<Array>(value_);
}

Json::Array &Json::asArray() {
  if (!isArray())
    throw kindError(Kind::Array, kind());
  return std::get<Array>(value_);
}

const Json::Object &Json::asObject() const {
  if (!isObject())
    throw kindError(Kind::Object, kind());
  return std::get<Object>(value_);
}

Json::Object &Json::asObject() {
  if (!isObject())
    throw kindError(Kind::Object, kind());
  return std::get<Object>(value_);
}

const Json *Json::find(std::string_view key) const {
  if (!isObject())
    return nullptr;
  for (const Member &member : std::get<Object>(value_))
    if (member.first == key)
      return &member.second;
  return nullptr;
}

Json *Json::find(std::string_view key) {
  return const_cast<Json *>(static_cast<const Json *>(this)->find(key));
}

Json &Json::operator[](std::string_view key) {
  if (isNull())
    value_ = Object{};
  if (Json *existing = find(key))
    return *existing;
  Object &members = asObject();
  members.emplace_back(std::string(key), Json());
  return members.back().second;
}

void Json::set(std::string_view key, Json value) {
  (*this)[key] = std::move(value);
}

void Json::push(Json value) {
  if (isNull())
    value_ = Array{};
  asArray().push_back(std::move(value));
}

size_t Json::size() const {
  if (isArray())
    return std::get<Array>(value_).size();
  if (isObject())
    return std::get<Object>(value_).size();
  return 0;
}

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
class Parser {
public:
  Parser(std::string_view text, std::string_view origin)
      : text(text), origin(origin) {}

  Json parseDocument() {
    skipSpace();
    Json value = parseValue(0);
    skipSpace();
    if (pos < text.size())
      fail("unexpected characters after the JSON value");
    return value;
  }

private:
  std::string_view text;
  std::string_view origin;
  size_t pos = 0;

  [[noreturn]] void fail(const std::string &message) { failAt(pos, message); }

  [[noreturn]] void failAt(size_t at, const std::string &message) {
    int line = 1, column = 1;
    for (size_t i = 0; i < at && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw JsonError(std::string(origin) + ":" + std::to_string(line) + ":" +
                        std::to_string(column) + ": " + message,
                    line, column);
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  static std::string describe(char c) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f)
      return std::string("'") + c + "'";
    char buf[16];
    std::snprintf(buf, sizeof(buf), "byte 0x%02x", u);
    return buf;
  }

  void skipSpace() {
    while (!atEnd()) {
      char c = text[pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      ++pos;
    }
  }

  void expectLiteral(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      fail("invalid literal (expected '" + std::string(word) + "')");
    pos += word.size();
  }

  Json parseValue(int depth) {
    if (atEnd())
      fail("unexpected end of input, expected a value");
    char c = text[pos];
    switch (c) {
    case '{':
      return parseObject(depth + 1);
    case '[':
      return parseArray(depth + 1);
    case '"':
      return Json(parseString());
    case 't':
      expectLiteral("true");
      return Json(true);
    case 'f':
      expectLiteral("false");
      return Json(false);
    case 'n':
      expectLiteral("null");
      return Json(nullptr);
    default:
      if (c == '-' || (c >= '0' && c <= '9'))
        return parseNumber();
      fail("unexpected " + describe(c) + ", expected a value");
    }
  }

  void checkDepth(int depth) {
    if (depth > Json::kMaxDepth)
      fail("nesting deeper than " + std::to_string(Json::kMaxDepth) +
           " levels");
  }

  Json parseArray(int depth) {
    checkDepth(depth);
    ++pos; // '['
    Json::Array elements;
    skipSpace();
    if (peek() == ']') {
      ++pos;
      return Json(std::move(elements));
    }
    while (true) {
      skipSpace();
      elements.push_back(parseValue(depth));
      skipSpace();
      if (atEnd())
        fail("unexpected end of input in an array, expected ',' or ']'");
      char c = text[pos++];
      if (c == ']')
        return Json(std::move(elements));
      if (c != ',')
        failAt(pos - 1, "unexpected " + describe(c) + " in an array, "
                        "expected ',' or ']'");
    }
  }

  Json parseObject(int depth) {
    checkDepth(depth);
    ++pos; // '{'
    Json::Object members;
    std::unordered_set<std::string> keys;
    skipSpace();
    if (peek() == '}') {
      ++pos;
      return Json(std::move(members));
    }
    while (true) {
      skipSpace();
      if (peek() != '"') {
        if (atEnd())
          fail("unexpected end of input in an object, expected a key");
        fail("unexpected " + describe(peek()) +
             " in an object, expected a string key");
      }
      size_t keyPos = pos;
      std::string key = parseString();
      if (!keys.insert(key).second)
        failAt(keyPos, "duplicate key \"" + key + "\"");
      skipSpace();
      if (peek() != ':') {
        if (atEnd())
          fail("unexpected end of input in an object, expected ':'");
        fail("unexpected " + describe(peek()) + " after a key, expected ':'");
      }
      ++pos;
      skipSpace();
      Json value = parseValue(depth);
      members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (atEnd())
        fail("unexpected end of input in an object, expected ',' or '}'");
      char c = text[pos++];
      if (c == '}')
        return Json(std::move(members));
      if (c != ',')
        failAt(pos - 1, "unexpected " + describe(c) + " in an object, "
                        "expected ',' or '}'");
    }
  }

  unsigned parseHex4() {
    if (text.size() - pos < 4)
      fail("truncated \\u escape");
    unsigned value = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos + i];
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f')
        value |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        value |= unsigned(c - 'A' + 10);
      else
        failAt(pos + i, "invalid hex digit " + describe(c) + " in \\u escape");
    }
    pos += 4;
    return value;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    size_t start = pos;
    ++pos; // opening quote
    std::string out;
    while (true) {
      if (atEnd())
        failAt(start, "unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        fail("control character " + describe(c) +
             " in a string (must be escaped)");
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      size_t escapePos = pos;
      ++pos;
      if (atEnd())
        failAt(start, "unterminated string");
      char e = text[pos++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = parseHex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate must be followed by an escaped low surrogate.
          if (text.substr(pos, 2) != "\\u")
            failAt(escapePos, "unpaired UTF-16 surrogate in \\u escape");
          pos += 2;
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            failAt(escapePos, "unpaired UTF-16 surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          failAt(escapePos, "unpaired UTF-16 surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        failAt(escapePos, "invalid escape '\\" + std::string(1, e) + "'");
      }
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  Json parseNumber() {
    size_t start = pos;
    bool integral = true;
    if (peek() == '-')
      ++pos;
    if (!isDigit(peek()))
      fail("invalid number: expected a digit");
    if (peek() == '0') {
      ++pos;
      if (isDigit(peek()))
        fail("invalid number: leading zeros are not allowed");
    } else {
      while (isDigit(peek()))
        ++pos;
    }
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!isDigit(peek()))
        fail("invalid number: expected a digit after '.'");
      while (isDigit(peek()))
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!isDigit(peek()))
        fail("invalid number: expected a digit in the exponent");
      while (isDigit(peek()))
        ++pos;
    }
    const char *first = text.data() + start;
    const char *last = text.data() + pos;
    if (integral) {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(first, last, value);
      if (ec == std::errc() && ptr == last)
        return Json(value);
      // Too large for int64: keep it approximately, as JSON readers do.
    }
    double value = 0;
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range) {
      // Underflow (negative exponent) is harmless: the value is zero.
      std::string_view number(first, size_t(last - first));
      size_t e = number.find_first_of("eE");
      if (e != std::string_view::npos && e + 1 < number.size() &&
          number[e + 1] == '-')
        return Json(number[0] == '-' ? -0.0 : 0.0);
    }
    if (ec != std::errc() || ptr != last)
      failAt(start, "number out of range: " + std::string(first, last));
    return Json(value);
  }
};
} // namespace

Json Json::parse(std::string_view text, std::string_view origin) {
  return Parser(text, origin).parseDocument();
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void tessel::appendJsonString(std::string &out, std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\b':
      out += "\\b";
      break;
    case '\f':
      out += "\\f";
      break;
    default:
      if (u < 0x20 || u == 0x7f) {
        out += "\\u00";
        out += hex[u >> 4];
        out += hex[u & 15];
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

static void appendDouble(std::string &out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  std::string_view text(buf, ec == std::errc() ? size_t(ptr - buf) : 0);
  out += text;
  // Keep the value a double when read back.
  if (text.find_first_of(".eE") == std::string_view::npos)
    out += ".0";
}

static bool isScalar(const Json &value) {
  return !value.isArray() && !value.isObject();
}

static void write(std::string &out, const Json &value, int indent,
                  int level) {
  auto newline = [&](int lvl) {
    if (indent < 0)
      return;
    out += '\n';
    out.append(size_t(indent) * size_t(lvl), ' ');
  };
  switch (value.kind()) {
  case Json::Kind::Null:
    out += "null";
    return;
  case Json::Kind::Bool:
    out += value.asBool() ? "true" : "false";
    return;
  case Json::Kind::Int:
    out += std::to_string(value.asInt());
    return;
  case Json::Kind::Double:
    appendDouble(out, value.asDouble());
    return;
  case Json::Kind::String:
    appendJsonString(out, value.asString());
    return;
  case Json::Kind::Array: {
    const Json::Array &elements = value.asArray();
    if (elements.empty()) {
      out += "[]";
      return;
    }
    bool flat = indent < 0;
    if (!flat) {
      flat = true;
      for (const Json &element : elements)
        flat = flat && isScalar(element);
    }
    out += '[';
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i)
        out += flat && indent >= 0 ? ", " : ",";
      if (!flat)
        newline(level + 1);
      write(out, elements[i], flat ? -1 : indent, level + 1);
    }
    if (!flat)
      newline(level);
    out += ']';
    return;
  }
  case Json::Kind::Object: {
    const Json::Object &members = value.asObject();
    if (members.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += ',';
      newline(level + 1);
      appendJsonString(out, members[i].first);
      out += indent < 0 ? ":" : ": ";
      write(out, members[i].second, indent, level + 1);
    }
    newline(level);
    out += '}';
    return;
  }
  }
}

std::string Json::dump() const {
  std::string out;
  write(out, *this, -1, 0);
  return out;
}

std::string Json::pretty(int indent) const {
  std::string out;
  write(out, *this, indent < 0 ? 0 : indent, 0);
  out += '\n';
  return out;
}
