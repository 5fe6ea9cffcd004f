//===- package/ConfigExpr.h - Prune conditions over tile configs -*- C++ -*-===//
//
// @autotune(prune=...) is a condition on a configuration's constexprs,
// num_warps, num_stages, warp_specialize and the launch's key values. The key values are only
// known at run time, so tesselc stores the condition as text (the Python-like
// expression as the frontend prints it) and the runtime evaluates it here, on
// the first launch with a new key. A small, total evaluator: errors are
// tessel::Error with the position, never a crash.
//
// Grammar (Python semantics): literals (int, float, True, False, "string"),
// names, unary - + not ~, binary + - * / // % ** & | ^, comparisons
// < <= > >= == != (chained), and, or, `a if c else b`, and the functions
// min, max, cdiv, abs.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_CONFIGEXPR_H
#define TESSEL_PACKAGE_CONFIGEXPR_H

#include "package/Json.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

class ConfigExpr {
public:
  /// Resolves a name to its value (int, double, bool or string), or nullptr
  /// when unknown.
  using Lookup = std::function<const Json *(std::string_view name)>;

  ConfigExpr() = default;
  /// Throws tessel::Error "cannot parse 'TEXT': column N: what".
  static ConfigExpr parse(std::string_view text);

  bool empty() const { return root_ == nullptr; }
  const std::string &text() const { return text_; }
  /// The names the expression reads (function names excluded), in order.
  std::vector<std::string> names() const;
  /// Throws "<what> 'TEXT' uses 'x', which is not one of a, b, c" when the
  /// expression reads a name outside `allowed`.
  void checkNames(const std::vector<std::string> &allowed,
                  std::string_view what) const;

  /// The value of the expression. Throws tessel::Error for unknown names,
  /// type errors and division by zero.
  Json evaluate(const Lookup &lookup) const;
  /// Python truthiness of evaluate(); an empty expression is false.
  bool test(const Lookup &lookup) const;

  struct Node;

private:
  std::shared_ptr<const Node> root_;
  std::string text_;
};

} // namespace tessel

#endif // TESSEL_PACKAGE_CONFIGEXPR_H
