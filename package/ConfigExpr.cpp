//===- package/ConfigExpr.cpp - Prune conditions over tile configs --------===//
//
// Tokenizer, recursive-descent parser (Python precedence) and a tree-walking
// evaluator over Json scalars. Depth is bounded so hostile text cannot
// overflow the stack.
//
//===----------------------------------------------------------------------===//
#include "package/ConfigExpr.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace tessel;

namespace {
enum class NodeKind { Literal, Name, Unary, Binary, Compare, And, Or, Ternary, Call };
} // namespace

struct ConfigExpr::Node {
  NodeKind kind = NodeKind::Literal;
  /// Operator ("+", "not", "<", ...) or function name.
  std::string op;
  /// Compare: the operators between consecutive operands.
  std::vector<std::string> compareOps;
  Json literal;
  std::string name;
  std::vector<std::shared_ptr<const Node>> args;
};

using Node = ConfigExpr::Node;
using NodePtr = std::shared_ptr<const Node>;

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

namespace {
constexpr int kMaxDepth = 64;

struct Token {
  enum Kind { End, Number, String, Name, Op } kind = End;
  std::string text;
  Json value;
  size_t column = 1;
};

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) { advance(); }

  NodePtr parseAll() {
    NodePtr node = expression(0);
    if (token.kind != Token::End)
      fail("unexpected '" + token.text + "'");
    return node;
  }

private:
  [[noreturn]] void fail(const std::string &message) const {
    throw Error("cannot parse '" + std::string(text) + "': column " +
                std::to_string(token.column) + ": " + message);
  }

  static bool isNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (c >= '0' && c <= '9');
  }

  void advance() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
    token = Token();
    token.column = pos + 1;
    if (pos >= text.size())
      return;
    char c = text[pos];
    if ((c >= '0' && c <= '9') ||
        (c == '.' && pos + 1 < text.size() && text[pos + 1] >= '0' &&
         text[pos + 1] <= '9')) {
      size_t start = pos;
      bool isFloat = false;
      while (pos < text.size() &&
             (isNameChar(text[pos]) || text[pos] == '.' ||
              ((text[pos] == '+' || text[pos] == '-') &&
               (text[pos - 1] == 'e' || text[pos - 1] == 'E')))) {
        if (text[pos] == '.' || text[pos] == 'e' || text[pos] == 'E')
          isFloat = true;
        ++pos;
      }
      token.kind = Token::Number;
      token.text = std::string(text.substr(start, pos - start));
      char *end = nullptr;
      if (isFloat) {
        double value = std::strtod(token.text.c_str(), &end);
        token.value = Json(value);
      } else {
        errno = 0;
        long long value = std::strtoll(token.text.c_str(), &end, 10);
        if (errno == ERANGE)
          fail("integer '" + token.text + "' is out of range");
        token.value = Json(value);
      }
      if (!end || *end != '\0')
        fail("malformed number '" + token.text + "'");
      return;
    }
    if (isNameChar(c)) {
      size_t start = pos;
      while (pos < text.size() && isNameChar(text[pos]))
        ++pos;
      token.kind = Token::Name;
      token.text = std::string(text.substr(start, pos - start));
      return;
    }
    if (c == '"' || c == '\'') {
      size_t start = ++pos;
      while (pos < text.size() && text[pos] != c)
        ++pos;
      if (pos >= text.size())
        fail("unterminated string");
      token.kind = Token::String;
      token.text = std::string(text.substr(start, pos - start));
      token.value = Json(token.text);
      ++pos;
      return;
    }
    static const char *const ops[] = {"**", "//", "<=", ">=", "==", "!=",
                                      "+",  "-",  "*",  "/",  "%",  "<",
                                      ">",  "(",  ")",  ",",  "&",  "|",
                                      "^",  "~"};
    for (const char *op : ops) {
      std::string_view spelling(op);
      if (text.substr(pos, spelling.size()) == spelling) {
        token.kind = Token::Op;
        token.text = std::string(spelling);
        pos += spelling.size();
        return;
      }
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  bool isOp(const char *op) const {
    return token.kind == Token::Op && token.text == op;
  }
  bool isKeyword(const char *word) const {
    return token.kind == Token::Name && token.text == word;
  }
  void expect(const char *op) {
    if (!isOp(op))
      fail(std::string("expected '") + op + "'" +
           (token.kind == Token::End ? " at the end"
                                     : ", found '" + token.text + "'"));
    advance();
  }

  static NodePtr make(NodeKind kind, std::string op,
                      std::vector<NodePtr> args) {
    auto node = std::make_shared<Node>();
    node->kind = kind;
    node->op = std::move(op);
    node->args = std::move(args);
    return node;
  }

  // `depth` counts nesting (parentheses, call arguments, unary operators, chained
  // conditionals), not grammar levels: the compiler writes conditions fully parenthesised.
  void enter(int depth) const {
    if (depth > kMaxDepth)
      fail("expression nested too deeply");
  }

  // expression := or ['if' or 'else' expression]
  NodePtr expression(int depth) {
    enter(depth);
    NodePtr value = orExpr(depth);
    if (!isKeyword("if"))
      return value;
    advance();
    NodePtr condition = orExpr(depth);
    if (!isKeyword("else"))
      fail("expected 'else'");
    advance();
    NodePtr otherwise = expression(depth + 1);
    return make(NodeKind::Ternary, "if", {condition, value, otherwise});
  }

  NodePtr orExpr(int depth) {
    enter(depth);
    NodePtr left = andExpr(depth);
    while (isKeyword("or")) {
      advance();
      left = make(NodeKind::Or, "or", {left, andExpr(depth)});
    }
    return left;
  }

  NodePtr andExpr(int depth) {
    enter(depth);
    NodePtr left = notExpr(depth + 1);
    while (isKeyword("and")) {
      advance();
      left = make(NodeKind::And, "and", {left, notExpr(depth + 1)});
    }
    return left;
  }

  NodePtr notExpr(int depth) {
    enter(depth);
    if (isKeyword("not")) {
      advance();
      return make(NodeKind::Unary, "not", {notExpr(depth + 1)});
    }
    return comparison(depth);
  }

  bool atCompareOp() const {
    return isOp("<") || isOp("<=") || isOp(">") || isOp(">=") || isOp("==") ||
           isOp("!=");
  }

  NodePtr comparison(int depth) {
    enter(depth);
    NodePtr first = binary(0, depth);
    if (!atCompareOp())
      return first;
    auto node = std::make_shared<Node>();
    node->kind = NodeKind::Compare;
    node->args.push_back(first);
    while (atCompareOp()) {
      node->compareOps.push_back(token.text);
      advance();
      node->args.push_back(binary(0, depth));
    }
    return node;
  }

  // Binary levels, loosest first: | ^ & (+ -) (* / // %).
  NodePtr binary(int level, int depth) {
    enter(depth);
    static const std::vector<std::vector<const char *>> levels = {
        {"|"}, {"^"}, {"&"}, {"+", "-"}, {"*", "/", "//", "%"}};
    if (level == int(levels.size()))
      return unary(depth + 1);
    NodePtr left = binary(level + 1, depth);
    while (true) {
      const char *matched = nullptr;
      for (const char *op : levels[size_t(level)])
        if (isOp(op))
          matched = op;
      if (!matched)
        return left;
      advance();
      left = make(NodeKind::Binary, matched,
                  {left, binary(level + 1, depth)});
    }
  }

  NodePtr unary(int depth) {
    enter(depth);
    if (isOp("-") || isOp("+") || isOp("~")) {
      std::string op = token.text;
      advance();
      return make(NodeKind::Unary, op, {unary(depth + 1)});
    }
    return power(depth);
  }

  NodePtr power(int depth) {
    enter(depth);
    NodePtr base = primary(depth);
    if (!isOp("**"))
      return base;
    advance();
    // Right associative, binds tighter than unary minus on its left.
    return make(NodeKind::Binary, "**", {base, unary(depth + 1)});
  }

  NodePtr primary(int depth) {
    enter(depth);
    if (token.kind == Token::Number || token.kind == Token::String) {
      auto node = std::make_shared<Node>();
      node->literal = token.value;
      advance();
      return node;
    }
    if (isOp("(")) {
      advance();
      NodePtr inner = expression(depth + 1);
      expect(")");
      return inner;
    }
    if (token.kind != Token::Name)
      fail(token.kind == Token::End ? "unexpected end of the expression"
                                    : "unexpected '" + token.text + "'");
    std::string name = token.text;
    if (name == "True" || name == "False") {
      advance();
      auto node = std::make_shared<Node>();
      node->literal = Json(name == "True");
      return node;
    }
    if (name == "and" || name == "or" || name == "not" || name == "if" ||
        name == "else")
      fail("unexpected '" + name + "'");
    advance();
    if (!isOp("(")) {
      auto node = std::make_shared<Node>();
      node->kind = NodeKind::Name;
      node->name = name;
      return node;
    }
    if (name != "min" && name != "max" && name != "cdiv" && name != "abs")
      fail("unknown function '" + name +
           "' (expected min, max, cdiv or abs)");
    advance();
    std::vector<NodePtr> args;
    if (!isOp(")")) {
      args.push_back(expression(depth + 1));
      while (isOp(",")) {
        advance();
        args.push_back(expression(depth + 1));
      }
    }
    expect(")");
    size_t count = args.size();
    if ((name == "cdiv" && count != 2) || (name == "abs" && count != 1) ||
        ((name == "min" || name == "max") && count < 1))
      fail(name + "() takes " +
           (name == "cdiv" ? "2 arguments"
            : name == "abs" ? "1 argument"
                            : "at least 1 argument") +
           ", got " + std::to_string(count));
    return make(NodeKind::Call, name, std::move(args));
  }

  std::string_view text;
  size_t pos = 0;
  Token token;
};

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

class Evaluator {
public:
  Evaluator(const ConfigExpr::Lookup &lookup, const std::string &text)
      : lookup(lookup), text(text) {}

  Json eval(const Node &node) {
    switch (node.kind) {
    case NodeKind::Literal:
      return node.literal;
    case NodeKind::Name: {
      const Json *value = lookup ? lookup(node.name) : nullptr;
      if (!value)
        fail("unknown name '" + node.name + "'");
      if (!value->isInt() && !value->isDouble() && !value->isBool() &&
          !value->isString())
        fail("'" + node.name + "' is not a number, bool or string");
      return *value;
    }
    case NodeKind::Unary:
      return unary(node.op, eval(*node.args[0]));
    case NodeKind::Binary:
      return binary(node.op, eval(*node.args[0]), eval(*node.args[1]));
    case NodeKind::Compare: {
      Json left = eval(*node.args[0]);
      for (size_t i = 0; i < node.compareOps.size(); ++i) {
        Json right = eval(*node.args[i + 1]);
        if (!compare(node.compareOps[i], left, right))
          return Json(false);
        left = std::move(right);
      }
      return Json(true);
    }
    case NodeKind::And: {
      Json left = eval(*node.args[0]);
      return truthy(left) ? eval(*node.args[1]) : left;
    }
    case NodeKind::Or: {
      Json left = eval(*node.args[0]);
      return truthy(left) ? left : eval(*node.args[1]);
    }
    case NodeKind::Ternary:
      return truthy(eval(*node.args[0])) ? eval(*node.args[1])
                                         : eval(*node.args[2]);
    case NodeKind::Call:
      return call(node);
    }
    return Json();
  }

  static bool truthy(const Json &value) {
    if (value.isBool())
      return value.asBool();
    if (value.isInt())
      return value.asInt() != 0;
    if (value.isDouble())
      return value.asDouble() != 0;
    if (value.isString())
      return !value.asString().empty();
    return false;
  }

private:
  [[noreturn]] void fail(const std::string &message) const {
    throw Error("cannot evaluate '" + text + "': " + message);
  }

  /// Ints and bools as int64; false for doubles and strings.
  static bool integral(const Json &value, int64_t &out) {
    if (value.isInt()) {
      out = value.asInt();
      return true;
    }
    if (value.isBool()) {
      out = value.asBool() ? 1 : 0;
      return true;
    }
    return false;
  }

  double number(const Json &value, const std::string &op) const {
    int64_t i = 0;
    if (integral(value, i))
      return double(i);
    if (value.isDouble())
      return value.asDouble();
    fail("operator '" + op + "' needs numbers, got a string");
  }

  Json unary(const std::string &op, const Json &value) const {
    if (op == "not")
      return Json(!truthy(value));
    int64_t i = 0;
    if (integral(value, i)) {
      if (op == "-")
        return Json(int64_t(0 - uint64_t(i)));
      if (op == "~")
        return Json(~i);
      return Json(i);
    }
    if (op == "~")
      fail("operator '~' needs an integer");
    double d = number(value, op);
    return Json(op == "-" ? -d : d);
  }

  static int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
      --q;
    return q;
  }

  Json binary(const std::string &op, const Json &a, const Json &b) const {
    if (op == "+" && a.isString() && b.isString())
      return Json(a.asString() + b.asString());
    int64_t x = 0, y = 0;
    if (integral(a, x) && integral(b, y)) {
      if (op == "+")
        return Json(int64_t(uint64_t(x) + uint64_t(y)));
      if (op == "-")
        return Json(int64_t(uint64_t(x) - uint64_t(y)));
      if (op == "*")
        return Json(int64_t(uint64_t(x) * uint64_t(y)));
      if (op == "&")
        return Json(x & y);
      if (op == "|")
        return Json(x | y);
      if (op == "^")
        return Json(x ^ y);
      if (op == "/") {
        if (y == 0)
          fail("division by zero");
        return Json(double(x) / double(y));
      }
      if (op == "//" || op == "%") {
        if (y == 0)
          fail("division by zero");
        if (x == INT64_MIN && y == -1)
          return Json(op == "//" ? INT64_MIN : int64_t(0));
        int64_t q = floorDiv(x, y);
        return Json(op == "//" ? q : x - q * y);
      }
      if (op == "**") {
        if (y < 0)
          return Json(std::pow(double(x), double(y)));
        int64_t result = 1;
        for (int64_t i = 0; i < y && i < 64; ++i)
          result = int64_t(uint64_t(result) * uint64_t(x));
        return Json(result);
      }
    }
    if (op == "&" || op == "|" || op == "^")
      fail("operator '" + op + "' needs integers");
    double p = number(a, op), q = number(b, op);
    if (op == "+")
      return Json(p + q);
    if (op == "-")
      return Json(p - q);
    if (op == "*")
      return Json(p * q);
    if (op == "**")
      return Json(std::pow(p, q));
    if (q == 0)
      fail("division by zero");
    if (op == "/")
      return Json(p / q);
    double floor = std::floor(p / q);
    return Json(op == "//" ? floor : p - floor * q);
  }

  bool compare(const std::string &op, const Json &a, const Json &b) const {
    if (a.isString() || b.isString()) {
      if (!a.isString() || !b.isString()) {
        if (op == "==" || op == "!=")
          return op == "!=";
        fail("cannot compare a string with a number using '" + op + "'");
      }
      int c = a.asString().compare(b.asString());
      return op == "<"    ? c < 0
             : op == "<=" ? c <= 0
             : op == ">"  ? c > 0
             : op == ">=" ? c >= 0
             : op == "==" ? c == 0
                          : c != 0;
    }
    int64_t x = 0, y = 0;
    if (integral(a, x) && integral(b, y))
      return op == "<"    ? x < y
             : op == "<=" ? x <= y
             : op == ">"  ? x > y
             : op == ">=" ? x >= y
             : op == "==" ? x == y
                          : x != y;
    double p = number(a, op), q = number(b, op);
    return op == "<"    ? p < q
           : op == "<=" ? p <= q
           : op == ">"  ? p > q
           : op == ">=" ? p >= q
           : op == "==" ? p == q
                        : p != q;
  }

  Json call(const Node &node) {
    std::vector<Json> args;
    for (const NodePtr &arg : node.args)
      args.push_back(eval(*arg));
    if (node.op == "abs") {
      int64_t i = 0;
      if (integral(args[0], i))
        return Json(i < 0 ? int64_t(0 - uint64_t(i)) : i);
      return Json(std::fabs(number(args[0], "abs")));
    }
    if (node.op == "cdiv") {
      int64_t x = 0, y = 0;
      if (!integral(args[0], x) || !integral(args[1], y))
        fail("cdiv() needs integers");
      if (y == 0)
        fail("division by zero");
      return Json(-floorDiv(-x, y));
    }
    // min / max: the first extreme element, Python style.
    Json best = args[0];
    for (size_t i = 1; i < args.size(); ++i) {
      bool better = node.op == "min" ? compare("<", args[i], best)
                                     : compare(">", args[i], best);
      if (better)
        best = args[i];
    }
    return best;
  }

  const ConfigExpr::Lookup &lookup;
  const std::string &text;
};

void collectNames(const Node &node, std::vector<std::string> &names) {
  if (node.kind == NodeKind::Name &&
      std::find(names.begin(), names.end(), node.name) == names.end())
    names.push_back(node.name);
  for (const NodePtr &arg : node.args)
    collectNames(*arg, names);
}
} // namespace

//===----------------------------------------------------------------------===//
// ConfigExpr
//===----------------------------------------------------------------------===//

ConfigExpr ConfigExpr::parse(std::string_view text) {
  ConfigExpr expr;
  expr.text_ = std::string(text);
  expr.root_ = Parser(text).parseAll();
  return expr;
}

std::vector<std::string> ConfigExpr::names() const {
  std::vector<std::string> result;
  if (root_)
    collectNames(*root_, result);
  return result;
}

void ConfigExpr::checkNames(const std::vector<std::string> &allowed,
                            std::string_view what) const {
  for (const std::string &name : names()) {
    if (std::find(allowed.begin(), allowed.end(), name) != allowed.end())
      continue;
    std::string list;
    for (const std::string &a : allowed)
      list += (list.empty() ? "" : ", ") + a;
    throw Error(std::string(what) + " '" + text_ + "' uses '" + name +
                "', which is not one of " + list);
  }
}

Json ConfigExpr::evaluate(const Lookup &lookup) const {
  if (!root_)
    return Json(false);
  return Evaluator(lookup, text_).eval(*root_);
}

bool ConfigExpr::test(const Lookup &lookup) const {
  return Evaluator::truthy(evaluate(lookup));
}
