//===- frontend/Config.h - kernel configurations and specialisations -------===//
//
// A kernel is compiled once per configuration: the constexpr values (from an
// @autotune config, the defaults and -D overrides) plus num_warps/num_stages and
// warp_specialize.
// Plain C++ (no MLIR).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_CONFIG_H
#define TESSEL_FRONTEND_CONFIG_H

#include "frontend/AST.h"
#include "frontend/ConstEval.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tessel::frontend {

/// Ordered (name, value) pairs, in the kernel's parameter order.
using ConstexprValues = std::vector<std::pair<std::string, ConstValue>>;

/// Everything MLIRGen needs to generate one kernel module.
struct Specialization {
  /// A value for every constexpr parameter of the kernel.
  ConstexprValues constexprs;
  unsigned numWarps = 4;
  unsigned numStages = 1;
  /// config(..., warp_specialize=True): its pipelined loops run in a producer and
  /// consumer partitions where they qualify (as tesselc --warp-specialize does for all).
  bool warpSpecialize = false;
  /// Runtime parameters assumed divisible by 16: pointers 16-byte aligned,
  /// integers multiples of 16.
  std::set<std::string> divisibleBy16;

  const ConstValue *lookup(const std::string &name) const;
};

/// Resolves the configurations of `kernel`: one per @autotune config (config
/// values, then defaults), or a single one from the defaults. `overrides`
/// (-D values) replace the value of that constexpr in every configuration;
/// names the kernel does not have are ignored. `defaultNumWarps` applies when
/// a configuration does not set num_warps. Errors (a constexpr without a value,
/// an unknown config key, a bad num_warps) go to `diags`. Config values and defaults may
/// name the module's constants (`moduleConstants`, as evalModuleConstants gives them).
std::optional<std::vector<Specialization>>
resolveConfigs(const ast::Function &kernel, const ConstexprValues &overrides,
               unsigned defaultNumWarps, DiagnosticEngine &diags,
               const std::map<std::string, ConstValue> &moduleConstants = {});

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_CONFIG_H
