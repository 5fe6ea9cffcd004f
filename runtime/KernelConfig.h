//===- runtime/KernelConfig.h - prune conditions for a launch ---*- C++ -*-===//
//
// The @autotune prune condition evaluated for a configuration (Package.h's Config) and a
// launch: the autotuner drops pruned configs
// from tuning, and Kernel::launch refuses an explicit config the condition rules out
// (softmax with a block shorter than the row would leave columns unwritten).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_KERNELCONFIG_H
#define TESSEL_RUNTIME_KERNELCONFIG_H

#include "runtime/Args.h"
#include "package/Json.h"
#include "package/Package.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tessel {

class ConfigExpr;

/// Why `prune` (the kernel's @autotune prune condition, possibly or-ed with more) is true
/// for `config` and a launch with `args` (all of the kernel's params; the key params'
/// values as the tuner sees them: pointers by 16-byte alignment), or "" when it is false
/// or empty. A condition that cannot be evaluated is a reason too.
std::string pruneReason(const KernelInfo &kernel, const ConfigExpr &prune, const Config &config,
                        const Arg *args);

} // namespace tessel

#endif // TESSEL_RUNTIME_KERNELCONFIG_H
