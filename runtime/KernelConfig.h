//===- runtime/KernelConfig.h - a kernel's tile configurations --*- C++ -*-===//
//
// A configuration's constexprs as grid functions and prune conditions see them, and the
// @autotune prune condition evaluated for a launch: the autotuner drops pruned configs
// from tuning, and Kernel::launch refuses an explicit config the condition rules out
// (softmax with a block shorter than the row would leave columns unwritten).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_KERNELCONFIG_H
#define TESSEL_RUNTIME_KERNELCONFIG_H

#include "runtime/Args.h"
#include "runtime/Json.h"
#include "runtime/Package.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

class ConfigExpr;

/// One tile configuration of a kernel, as grid functions see it.
class Config {
public:
  Config(const KernelInfo &kernel, int index);

  int index() const { return index_; }
  int numWarps() const { return numWarps_; }
  int numStages() const { return numStages_; }
  /// An integer (or bool) constexpr's value; throws tessel::Error naming the
  /// kernel and the constexprs it has when `name` is not one of them.
  int64_t operator[](std::string_view name) const;
  /// Any constexpr (ints, bools, dtype names), nullptr when absent.
  const Json *find(std::string_view name) const;
  /// "BLOCK=1024 num_warps=4 num_stages=1".
  const std::string &text() const { return text_; }

private:
  std::string kernel_;
  int index_ = 0;
  int numWarps_ = 4;
  int numStages_ = 1;
  Json::Object constexprs_;
  std::string text_;
};

/// Why `prune` (the kernel's @autotune prune condition, possibly or-ed with more) is true
/// for `config` and a launch with `args` (all of the kernel's params; the key params'
/// values as the tuner sees them: pointers by 16-byte alignment), or "" when it is false
/// or empty. A condition that cannot be evaluated is a reason too.
std::string pruneReason(const KernelInfo &kernel, const ConfigExpr &prune, const Config &config,
                        const Arg *args);

} // namespace tessel

#endif // TESSEL_RUNTIME_KERNELCONFIG_H
